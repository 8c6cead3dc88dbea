"""Shared pytest hooks: tests can put lines in the terminal summary (shown without `-s`).

A test appends to `SUMMARY` (e.g. the program fuzzer's counts); `pytest_terminal_summary`
prints them after the run, so they appear in `bash scripts/test`'s output.
"""

from __future__ import annotations

SUMMARY: list[str] = []


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    if SUMMARY:
        terminalreporter.section("counts")
        for line in SUMMARY:
            terminalreporter.write_line(line)
