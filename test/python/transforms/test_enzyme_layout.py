"""The Enzyme layout allocates as Enzyme does (tapeflow-lower-tape, rule 3): a cache whose
trip count is known at the loop's entry, a run-time value, is allocated once there and
indexed by the loop counters.

The reaction-diffusion kernel in Enzyme's C style (`double *u, int n, int T`, the user's
n = 512, T = 8) keeps the same tape bytes as its `#define` twin, its cycles within 5%, and
TapeFlow's speedup over it within 2% of the twin's on both presets."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import INPUTS as SHARED_INPUTS

INPUTS = SHARED_INPUTS / "enzyme_layout"
N, T = 512, 8
PRESETS = ("default-45nm", "accel-salam")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not on PATH")
    return path


def _lowered(source: Path, *defines: str, passes: str = "tapeflow-autodiff,tapeflow-lower-tape"
             ) -> str:  # fmt: skip
    return subprocess.run(
        [_tool("tapeflow-opt"), str(source), *defines, "-p", passes],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def _simulate(tmp_path: Path, name: str, text: str, scalars: list[str],
              machine: str = "default-45nm") -> dict:  # fmt: skip
    program = tmp_path / f"{name}.mlir"
    program.write_text(text)
    u = np.random.default_rng(0).uniform(-1, 1, N)
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, arg0=u, arg1=np.zeros(N), arg2=np.zeros(N), arg3=np.zeros(N))
    out = subprocess.run(
        [_tool("tapeflow-sim"), str(program), "--entry", "reaction_diffusion_grad",
         "--args", *scalars, "--inputs", str(inputs), "--machine", machine, "--json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out)


def test_runtime_sizes_allocate_once_at_entry():
    text = _lowered(INPUTS / "reaction_diffusion.c")
    grad = text[text.index("func.func @reaction_diffusion_grad") :]
    assert "memref<memref<" not in grad  # no growable stack
    assert "scf.if" not in grad  # no growth check at a push
    assert "tapeflow.tape_meta" not in grad  # no stack pointer: indexed by the counters
    # one cache: the C path's cse leaves one load of u[i] per iteration (three before)
    assert grad.count("{tapeflow.tape} : memref<?x?xf64>") == 1


def _pair(tmp_path: Path, passes: str, machine: str) -> tuple[dict, dict]:
    """The run-time-size kernel's report and its twin's, compiled by `passes`."""
    runtime = _lowered(INPUTS / "reaction_diffusion.c", passes=passes)
    twin = _lowered(INPUTS / "reaction_diffusion_define.c", "-D", f"N={N}", "-D", f"T={T}",
                    passes=passes)  # fmt: skip
    return (_simulate(tmp_path, "runtime", runtime, [str(N), str(T), "1.0"], machine),
            _simulate(tmp_path, "twin", twin, ["1.0"], machine))  # fmt: skip


def test_reaction_diffusion_matches_its_define_twin(tmp_path):
    ours, theirs = _pair(tmp_path, "tapeflow-autodiff,tapeflow-lower-tape", "default-45nm")
    assert ours["tape_bytes"] == theirs["tape_bytes"] == 8 * T * (N - 2)
    assert ours["cycles"] == pytest.approx(theirs["cycles"], rel=0.05)


@pytest.mark.parametrize("machine", PRESETS)
def test_tapeflow_speedup_matches_the_twins(tmp_path, machine):
    """TapeFlow over the Enzyme layout: the run-time sizes change neither side's program
    beyond the sizes, so the ratio is the twin's within 2%."""
    enzyme = _pair(tmp_path, "tapeflow-autodiff,tapeflow-lower-tape", machine)
    tapeflow = _pair(tmp_path, f"tapeflow{{machine={machine}}}", machine)
    ours, twin = (tf["cycles"] / e["cycles"] for tf, e in zip(tapeflow, enzyme, strict=True))
    assert ours == pytest.approx(twin, rel=0.02)


def test_indexed_at_entry_keeps_the_gradient(tmp_path):
    """The arrays sized at the nest's entry give the twin's gradient, bit for bit."""
    u = np.random.default_rng(0).uniform(-1, 1, N)
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, arg0=u, arg1=np.zeros(N), arg2=np.zeros(N), arg3=np.zeros(N))
    printed = []
    for source, defines, scalars in (
        ("reaction_diffusion.c", (), [str(N), str(T), "1.0"]),
        ("reaction_diffusion_define.c", ("-D", f"N={N}", "-D", f"T={T}"), ["1.0"]),
    ):  # fmt: skip
        program = tmp_path / f"{source}.mlir"
        program.write_text(_lowered(INPUTS / source, *defines))
        out = subprocess.run(
            [_tool("tapeflow-run"), str(program), "--entry", "reaction_diffusion_grad",
             "--args", *scalars, "--inputs", str(inputs)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        printed.append(re.sub(r"memref<[^>]*>", "memref", out))
    assert printed[0] == printed[1]
