"""The Enzyme layout allocates as Enzyme does (tapeflow-lower-tape, rule 3): a cache whose
trip count is known at the loop's entry, a run-time value, is allocated once there and
indexed by the loop counters.

The reaction-diffusion kernel in Enzyme's C style (`double *u, int n, int T`, the user's
n = 512, T = 8) keeps the same tape bytes as its `#define` twin, its cycles within 5%, and
TapeFlow's speedup over it within 2% of the twin's on both presets."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from helpers.cli import run_main
from helpers.paths import INPUTS as SHARED_INPUTS

from tapeflow.tools import opt, run, sim

pytestmark = pytest.mark.xdist_group("enzyme_layout")  # the compiled programs are shared

INPUTS = SHARED_INPUTS / "enzyme_layout"
N, T = 512, 8
PRESETS = ("default-45nm", "accel-salam")


def _tool(name: str, *argv: str) -> str:
    """What `name argv` prints (it must exit 0), run in this process (`helpers.cli`)."""
    main = {"tapeflow-opt": opt.main, "tapeflow-sim": sim.main, "tapeflow-run": run.main}[name]
    done = run_main(main, argv)
    assert done.returncode == 0, done.stderr
    return done.stdout


@functools.cache
def _lowered(source: Path, *defines: str, passes: str = "tapeflow-autodiff,tapeflow-lower-tape"
             ) -> str:  # fmt: skip
    """The lowered program (the same for every test that asks: compiled once)."""
    return _tool("tapeflow-opt", str(source), *defines, "-p", passes)


def _inputs(folder: Path) -> Path:
    u = np.random.default_rng(0).uniform(-1, 1, N)
    inputs = folder / "inputs.npz"
    np.savez(inputs, arg0=u, arg1=np.zeros(N), arg2=np.zeros(N), arg3=np.zeros(N))
    return inputs


@functools.cache
def _report(text: str, scalars: tuple[str, ...], machine: str) -> str:
    """tapeflow-sim's JSON report of `text` (a run is deterministic: simulated once)."""
    with tempfile.TemporaryDirectory() as folder:
        program = Path(folder) / "program.mlir"
        program.write_text(text)
        return _tool("tapeflow-sim", str(program), "--entry", "reaction_diffusion_grad",
                     "--args", *scalars, "--inputs", str(_inputs(Path(folder))),
                     "--machine", machine, "--json")  # fmt: skip


def _simulate(text: str, scalars: list[str], machine: str = "default-45nm") -> dict:
    return json.loads(_report(text, tuple(scalars), machine))


def test_runtime_sizes_allocate_once_at_entry():
    text = _lowered(INPUTS / "reaction_diffusion.c")
    grad = text[text.index("func.func @reaction_diffusion_grad") :]
    assert "memref<memref<" not in grad  # no growable stack
    assert "scf.if" not in grad  # no growth check at a push
    assert "tapeflow.tape_meta" not in grad  # no stack pointer: indexed by the counters
    # one cache: the C path's cse leaves one load of u[i] per iteration (three before)
    assert grad.count("{tapeflow.tape} : memref<?x?xf64>") == 1


def _pair(passes: str, machine: str) -> tuple[dict, dict]:
    """The run-time-size kernel's report and its twin's, compiled by `passes`."""
    runtime = _lowered(INPUTS / "reaction_diffusion.c", passes=passes)
    twin = _lowered(INPUTS / "reaction_diffusion_define.c", "-D", f"N={N}", "-D", f"T={T}",
                    passes=passes)  # fmt: skip
    return (_simulate(runtime, [str(N), str(T), "1.0"], machine),
            _simulate(twin, ["1.0"], machine))  # fmt: skip


def test_reaction_diffusion_matches_its_define_twin():
    ours, theirs = _pair("tapeflow-autodiff,tapeflow-lower-tape", "default-45nm")
    assert ours["tape_bytes"] == theirs["tape_bytes"] == 8 * T * (N - 2)
    assert ours["cycles"] == pytest.approx(theirs["cycles"], rel=0.05)


@pytest.mark.parametrize("machine", PRESETS)
def test_tapeflow_speedup_matches_the_twins(machine):
    """TapeFlow over the Enzyme layout: the run-time sizes change neither side's program
    beyond the sizes, so the ratio is the twin's within 2%."""
    enzyme = _pair("tapeflow-autodiff,tapeflow-lower-tape", machine)
    tapeflow = _pair(f"tapeflow{{machine={machine}}}", machine)
    ours, twin = (tf["cycles"] / e["cycles"] for tf, e in zip(tapeflow, enzyme, strict=True))
    assert ours == pytest.approx(twin, rel=0.02)


def test_indexed_at_entry_keeps_the_gradient(tmp_path):
    """The arrays sized at the nest's entry give the twin's gradient, bit for bit."""
    inputs = _inputs(tmp_path)
    printed = []
    for source, defines, scalars in (
        ("reaction_diffusion.c", (), [str(N), str(T), "1.0"]),
        ("reaction_diffusion_define.c", ("-D", f"N={N}", "-D", f"T={T}"), ["1.0"]),
    ):  # fmt: skip
        program = tmp_path / f"{source}.mlir"
        program.write_text(_lowered(INPUTS / source, *defines))
        out = _tool("tapeflow-run", str(program), "--entry", "reaction_diffusion_grad",
                    "--args", *scalars, "--inputs", str(inputs))  # fmt: skip
        printed.append(re.sub(r"memref<[^>]*>", "memref", out))
    assert printed[0] == printed[1]
