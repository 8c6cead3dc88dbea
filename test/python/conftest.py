"""Shared pytest hooks: tests can put lines in the terminal summary (shown without `-s`).

A test appends to `SUMMARY` (e.g. the program fuzzer's counts); `pytest_terminal_summary`
prints them after the run, so they appear in `bash scripts/test`'s output.
"""

from __future__ import annotations

import sys
from pathlib import Path

SUMMARY: list[str] = []

# Tests read the benchmark kernels' references (`benchmarks.kernels`, a folder of the
# source tree, not of the package): the repository root goes on sys.path here, once, as
# the package itself no longer does it (tapeflow/ imports nothing from benchmarks/).
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    if SUMMARY:
        terminalreporter.section("counts")
        for line in SUMMARY:
            terminalreporter.write_line(line)
