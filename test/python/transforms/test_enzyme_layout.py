"""The Enzyme layout allocates as Enzyme does (tapeflow-lower-tape, rule 3): a cache whose
trip count is known at the loop's entry, a run-time value, is allocated once there.

The reaction-diffusion kernel in Enzyme's C style (`double *u, int n, int T`) keeps the
same tape bytes as its `#define` twin, within one record (the stack pointers)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import INPUTS as SHARED_INPUTS

INPUTS = SHARED_INPUTS / "enzyme_layout"
N, T = 64, 4


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not on PATH")
    return path


def _lowered(source: Path, *defines: str) -> str:
    passes = "tapeflow-autodiff,tapeflow-lower-tape"
    return subprocess.run(
        [_tool("tapeflow-opt"), str(source), *defines, "-p", passes],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def _simulate(tmp_path: Path, name: str, text: str, scalars: list[str]) -> dict:
    program = tmp_path / f"{name}.mlir"
    program.write_text(text)
    u = np.random.default_rng(0).uniform(-1, 1, N)
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, arg0=u, arg1=np.zeros(N), arg2=np.zeros(N), arg3=np.zeros(N))
    out = subprocess.run(
        [_tool("tapeflow-sim"), str(program), "--entry", "reaction_diffusion_grad",
         "--args", *scalars, "--inputs", str(inputs), "--json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out)


def test_runtime_sizes_allocate_once_at_entry():
    text = _lowered(INPUTS / "reaction_diffusion.c")
    grad = text[text.index("func.func @reaction_diffusion_grad") :]
    assert "memref<memref<" not in grad  # no growable stack
    assert "scf.if" not in grad  # no growth check at a push
    # one cache: the C path's cse leaves one load of u[i] per iteration (three before)
    assert grad.count("{tapeflow.tape} : memref<?xf64>") == 1


def test_reaction_diffusion_matches_its_define_twin(tmp_path):
    runtime = _lowered(INPUTS / "reaction_diffusion.c")
    twin = _lowered(INPUTS / "reaction_diffusion_define.c", "-D", f"N={N}", "-D", f"T={T}")
    record = 8 * twin.count("{tapeflow.tape}")  # one f64 per cache
    ours = _simulate(tmp_path, "runtime", runtime, [str(N), str(T), "1.0"])
    theirs = _simulate(tmp_path, "twin", twin, ["1.0"])
    assert 0 <= ours["tape_bytes"] - theirs["tape_bytes"] <= record
    assert ours["tape_bytes"] == theirs["tape_bytes"] + 8  # the one cache's stack pointer
