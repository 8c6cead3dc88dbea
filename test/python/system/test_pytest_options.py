"""The project's pytest options (pyproject.toml) keep pytest's summary line.

`bash scripts/test` and `pytest -q` must end with "N passed" (an `addopts` of -q made a
developer's -q into -qq, which hides it), and `-m "not slow"` must select the quick tests.
Each case runs pytest, in a child process as a developer would, on a two-test file under
a copy of the project's options.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from helpers.paths import ROOT

pytestmark = pytest.mark.slow  # pytest in a child process

TESTS = """
import pytest

def test_quick():
    pass

@pytest.mark.slow
def test_end_to_end():
    pass
"""


def _pytest(tmp_path: Path, *argv: str) -> str:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    lines = ["[tool.pytest.ini_options]"]
    for key, value in options["ini_options"].items():
        if key != "testpaths":
            lines.append(f"{key} = {json.dumps(value)}")
    (tmp_path / "pyproject.toml").write_text("\n".join(lines) + "\n")
    (tmp_path / "test_two.py").write_text(TESTS)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_summary_line_says_how_many_passed(tmp_path: Path):
    """As `bash scripts/test` runs it (no -q)."""
    assert re.search(r"^=* ?2 passed in ", _pytest(tmp_path, "-rs"), re.M)


def test_quiet_not_slow_says_how_many_passed_and_deselected(tmp_path: Path):
    """A developer's quick run: -q keeps the line (-qq would hide it)."""
    out = _pytest(tmp_path, "-q", "-m", "not slow")
    assert re.search(r"^1 passed, 1 deselected in ", out, re.M)
