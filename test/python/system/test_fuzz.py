"""The program fuzzer (`fuzz/`) on a fixed budget of random programs.

Each program is checked end to end (see `fuzz/checks.py`): gradients against central
differences (f64) or the f64 twin (f32), every pipeline prefix and the whole `tapeflow`
pipeline bit for bit against the autodiff IR, and the simulator's fast path against its
interpreter path. CI runs `BUDGET` programs with the default features (those no known bug
breaks); `scripts/fuzz --fuzz N` runs more, and minimizes what fails. The counts are
printed in pytest's terminal summary.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from conftest import SUMMARY

from fuzz.__main__ import run
from fuzz.checks import Failure, Stats, check_program, parse
from fuzz.minimize import minimize
from fuzz.program import DEFAULT_FEATURES, FEATURES, SIM_FEATURES, SIM_ONLY, generate
from helpers.paths import TESTS

BUDGET = 200  # programs; about 75 s of CPU (scripts/fuzz --fuzz 200 prints the time)


@pytest.mark.slow
def test_fuzz_budget():
    start = time.monotonic()
    stats, failures = run(range(BUDGET), DEFAULT_FEATURES, seconds=120.0)  # a loaded machine
    SUMMARY.append(f"program fuzzer: {stats.summary()} in {time.monotonic() - start:.0f} s")
    assert stats.programs == BUDGET
    assert stats.checks >= 5 * BUDGET  # every family ran on (nearly) every program
    # The programs reach what matters: record tapes, streamed tiles, growable tapes, f32.
    for what in ("region tapes", "streamed tiles", "growable tapes", "f32"):
        assert stats.covered[what] >= BUDGET // 10, (what, stats.covered)
    report = [f"seed {p.seed}: {f}" for p, f in failures]
    assert not failures, "\n".join(report[:10]) + "\n(scripts/fuzz --seed N minimizes one)"


def test_generator_is_deterministic_and_uses_every_feature():
    """Same seed, same program; over the budget every construct appears."""
    assert generate(5).render() == generate(5).render()
    script = "from fuzz.program import generate; print(generate(7).render())"
    runs = {
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                       cwd=TESTS, env={**os.environ, "PYTHONHASHSEED": h}).stdout
        for h in ("1", "2")
    }  # fmt: skip
    assert runs == {generate(7).render() + "\n"}  # the same in every process
    texts = "\n".join(generate(s, frozenset(FEATURES)).render() for s in range(BUDGET))
    for construct in ("scf.for", "scf.if", "scf.while", "arith.select", "math.exp", "f32",
                      "memref.store", "memref.alloc", "func.call", "step %c2", "step %c3",
                      "= %c1 to", "= %c2 to %c1", "to %n", "memref.load %cnt", "arith.addi", "arith.divsi"):  # fmt: skip
        assert construct in texts, construct


def test_simulator_features_stay_out_of_the_fuzzer():
    """The simulator tests' programs (`SIM_FEATURES`) reach what only they may hold (an
    index -1, one loaded from memory, a 2-D memref, the other float type, i64 values,
    maxnumf/minnumf of any value); no fuzzer program (every feature) holds any of it."""
    sim_only = (r"= arith.constant -1 : index", r"%j\d+ = memref.load %cnt\[", r"memref<3x4x",
                r"arith.truncf", r"arith.extf", r"%q: i64", r"= arith.muli %q", r"arith.maxnumf",
                r"arith.minnumf")  # fmt: skip
    assert not set(SIM_ONLY) & set(FEATURES)
    sim = "\n".join(generate(s, SIM_FEATURES).render() for s in range(100))
    fuzz = "\n".join(generate(s, frozenset(FEATURES)).render() for s in range(BUDGET))
    for construct in sim_only:
        assert re.search(construct, sim), construct
        assert not re.search(construct, fuzz), construct


def _mutating(real, stage: str, old: str, new: str):
    """`checks.apply` with a seeded bug: after `stage`, `old` becomes `new` in @f_grad."""

    def apply(module, pipeline: str):
        module = real(module, pipeline)
        if stage not in pipeline:
            return module
        head, sep, grad = str(module).partition("@f_grad")
        return real(parse(head + sep + grad.replace(old, new)), "")

    return apply


def _first_failure(features=DEFAULT_FEATURES) -> tuple[object, Failure]:
    for seed in range(40):
        program = generate(seed, features)
        text = program.render()
        if program.float_type != "f64" or "math.sin" not in text or "math.cos" in text:
            continue
        try:
            check_program(program, features)
        except Failure as f:
            return program, f
    raise AssertionError("the seeded bug was not found in 40 programs")


def test_a_wrong_derivative_is_found(monkeypatch):
    """d sin = cos, seeded as d sin = sin: the finite-difference check reports it."""
    import fuzz.checks as checks

    monkeypatch.setattr(checks, "apply",
                        _mutating(checks.apply, "tapeflow-autodiff", "math.cos", "math.sin"))
    _, failure = _first_failure()
    assert (failure.family, failure.kind) == ("gradient", "wrong-gradient")


def test_a_changed_bit_is_found_and_minimized(monkeypatch):
    """A pass that turns sin into cos in @f_grad is a bit difference for that pipeline;
    the minimized program still shows it and is smaller."""
    import fuzz.checks as checks

    monkeypatch.setattr(checks, "apply",
                        _mutating(checks.apply, "tapeflow-lower-tape", "math.sin", "math.cos"))
    program, failure = _first_failure()
    assert (failure.kind, failure.where) == ("bit-difference", "tapeflow-lower-tape")
    small = minimize(program, failure, DEFAULT_FEATURES)
    assert small.size() < program.size()
    with pytest.raises(Failure) as again:
        check_program(small, families=("pipeline",))
    assert again.value.signature() == failure.signature()


def _spin(*args, **kwargs) -> None:
    while True:
        pass


@pytest.mark.parametrize("stuck, wall_factor, limit", [
    (_spin, 100, "0.5 s of CPU time"), (lambda *args, **kwargs: time.sleep(30), 2, "1 s")])
def test_a_hang_is_reported(monkeypatch, stuck, wall_factor: int, limit: str):
    """A program that does not finish within the time limit counts as a hang: its CPU
    time (a loop), or `WALL_FACTOR` times that of wall time (a program that waits)."""
    import fuzz.__main__ as main
    import fuzz.checks as checks

    monkeypatch.setattr(main, "check_program", stuck)
    monkeypatch.setattr(checks, "WALL_FACTOR", wall_factor)
    stats, failures = run([3], seconds=0.5)
    assert [(f.kind, f.message) for _, f in failures] == [("hang", f"no result after {limit}")]
    assert stats.failures["hang"] == 1
