"""Shared pytest hooks: tests can put lines in the terminal summary (shown without `-s`).

A test appends to `SUMMARY` (e.g. the program fuzzer's counts); the lines travel with the
test's report (`user_properties`), so `pytest_terminal_summary` prints them after the run
also when pytest-xdist ran the test in a worker process (`bash scripts/test`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SUMMARY: list[str] = []
_SENT = 0  # lines of SUMMARY already attached to a report (in this process)
_RECEIVED: list[str] = []  # lines from every report (in the process that prints)

# Tests read the benchmark kernels' references (`benchmarks.kernels`, a folder of the
# source tree, not of the package): the repository root goes on sys.path here, once, as
# the package itself no longer does it (tapeflow/ imports nothing from benchmarks/). So
# does this folder, so that a test in any of its subfolders imports `helpers` and `fuzz`.
for _path in (Path(__file__).resolve().parents[2], Path(__file__).resolve().parent):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The test files with `slow` tests run first, each file's tests together and in order
    (module-scoped fixtures are set up once). pytest-xdist hands tests out in this order, so
    the long ones start early and the run ends with short tests on every worker, not one
    worker finishing a long test while the others wait."""
    has_slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in has_slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ARG001
    global _SENT
    report = yield
    report.user_properties.extend(("summary", line) for line in SUMMARY[_SENT:])
    _SENT = len(SUMMARY)
    return report


def pytest_runtest_logreport(report):
    _RECEIVED.extend(value for key, value in report.user_properties if key == "summary")


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    if _RECEIVED:
        terminalreporter.section("counts")
        for line in _RECEIVED:
            terminalreporter.write_line(line)
