"""docs/TUTORIAL.md is executed: its ```sh blocks run in order, in one empty folder, and
each must exit 0 (the tools come from this environment)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import ROOT

TUTORIAL = ROOT / "docs" / "TUTORIAL.md"


def blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", TUTORIAL.read_text(), re.DOTALL)


@pytest.mark.skipif(importlib.util.find_spec("clang") is None, reason="needs libclang")
def test_every_command_of_the_tutorial_runs(tmp_path: Path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    assert len(blocks()) >= 6
    for block in blocks():
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, f"{block}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert (tmp_path / "plots" / "heatmap_speedup.png").is_file()
    assert "bit-identical" in (tmp_path / "bench-out" / "results.md").read_text()
