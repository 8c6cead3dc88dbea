"""The command-line tools start in well under a second of CPU: importing one loads the
IR (xDSL) and its own code, never numba, Dask, matplotlib or libclang, which the commands
that use them import where they run. The hardware model's own modules are light (they load
numba only when a loop kernel compiles): `tapeflow-sim`, which runs it, imports them."""

from __future__ import annotations

import subprocess
import sys

TOOLS = ["opt", "run", "exec", "sim", "cc", "bench", "sweep"]
HEAVY = ["numba", "llvmlite", "dask", "distributed", "matplotlib", "clang"]

PROBE = """
import importlib, sys
for tool in sys.argv[1:]:
    importlib.import_module("tapeflow.tools." + tool)
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY or m in HEAVY
                   or any(m.startswith(h + ".") for h in HEAVY))
    print(tool, *heavy)
"""


def test_tools_import_no_heavy_module():
    """One fresh interpreter imports each tool in turn (the first that pulls a heavy module
    in is named with it)."""
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    out = subprocess.run([sys.executable, "-c", code, *TOOLS], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert out.split("\n")[:-1] == TOOLS, out
