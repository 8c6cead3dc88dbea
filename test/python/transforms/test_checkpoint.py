"""`tapeflow-checkpoint` keeps the gradient bit for bit and recomputes as Revolve does.

- On the bundled time-loop kernels (small size) and a hand-written loop with a scalar
  iter_arg and a trip count known only at run time, every schedule and several snapshot
  counts give the same bits as the non-checkpointed autodiff IR: gradients, returned
  values and every memref argument (the primal outputs too).
- The untaped forward steps the binomial schedule runs, counted at run time over a grid of
  (T, s), equal Revolve's optimum from the theory (Griewank & Walther, TOMS Alg. 799:
  with r the least integer with T <= C(s+r, s), the minimal number of forward steps is
  r*T - C(s+r, s+1)), plus one: the forward sweep's untaped last step.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tapeflow import native
from tapeflow.interpreters import make_interpreter


from helpers.pipelines import apply, grad_args, run

from tapeflow.eval.bundled import KERNELS

TIME_LOOP_KERNELS = ("mass_spring", "lstm", "ragged_rnn", "pwl")

LOOP = """
func.func @f(%x: memref<2xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %acc = scf.for %t = %c0 to %n step %c1 iter_args(%a = %z) -> (f64) {
    %x0 = memref.load %x[%c0] : memref<2xf64>
    %x1 = memref.load %x[%c1] : memref<2xf64>
    %s = math.sin %x0 : f64
    %y = arith.mulf %s, %x1 : f64
    memref.store %y, %x[%c0] : memref<2xf64>
    %sq = arith.mulf %a, %x0 : f64
    %a2 = arith.addf %sq, %y : f64
    scf.yield %a2 : f64
  } {tapeflow.checkpoint}
  %last = memref.load %x[%c0] : memref<2xf64>
  %r = arith.addf %acc, %last : f64
  func.return %r : f64
}
"""


OVERWRITTEN_AFTER = """
func.func @f(%x: memref<2xf64>, %a: memref<1xf64>, %n: index) -> f64
    attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %five = arith.constant 5.0 : f64
  %acc = scf.for %t = %c0 to %n step %c1 iter_args(%acc0 = %z) -> (f64) {
    %x0 = memref.load %x[%c0] : memref<2xf64>
    %w = memref.load %a[%c0] : memref<1xf64>
    %p = arith.mulf %x0, %w : f64
    %s = math.sin %p : f64
    memref.store %s, %x[%c0] : memref<2xf64>
    %acc1 = arith.addf %acc0, %s : f64
    scf.yield %acc1 : f64
  }
  memref.store %five, %a[%c0] : memref<1xf64>
  %last = memref.load %x[%c0] : memref<2xf64>
  %r = arith.addf %acc, %last : f64
  func.return %r : f64
}
"""


@pytest.mark.parametrize("schedule", ["binomial", "periodic"])
def test_buffer_read_by_the_loop_and_overwritten_after_it(schedule: str):
    """%a is only read by the loop, then overwritten: a replayed step must read the old
    value, so %a is part of the snapshots."""
    autodiff = str(apply(OVERWRITTEN_AFTER, "tapeflow-autodiff"))
    args = [np.array([0.7, 0.2]), np.zeros(2), np.array([1.3]), np.zeros(1), 6, 1.0]
    expected = run(apply(autodiff, ""), "f_grad", args)
    ckpt = apply(autodiff, f"tapeflow-checkpoint{{snapshots=2 schedule={schedule}}}")
    assert "memref<3x1xf64>" in str(ckpt)  # the snapshots of %a
    assert run(ckpt, "f_grad", args) == expected


TWO_LOOPS = """
func.func @f(%x: memref<2xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %a = scf.for %t = %c0 to %n step %c1 iter_args(%a0 = %z) -> (f64) {
    %x0 = memref.load %x[%c0] : memref<2xf64>
    %s = math.sin %x0 : f64
    memref.store %s, %x[%c0] : memref<2xf64>
    %a1 = arith.addf %a0, %s : f64
    scf.yield %a1 : f64
  } {tapeflow.checkpoint}
  %b = scf.for %t = %c0 to %n step %c1 iter_args(%b0 = %a) -> (f64) {
    %x1 = memref.load %x[%c1] : memref<2xf64>
    %c = math.cos %x1 : f64
    %q = arith.mulf %c, %a : f64
    %p = arith.mulf %q, %b0 : f64
    memref.store %p, %x[%c1] : memref<2xf64>
    scf.yield %p : f64
  } {tapeflow.checkpoint}
  func.return %b : f64
}
"""


def test_two_checkpointed_loops_in_one_function():
    """The second loop's body uses the first one's result (a value the first rewrite
    replaces)."""
    autodiff = str(apply(TWO_LOOPS, "tapeflow-autodiff"))
    args = [np.array([0.7, 0.2]), np.zeros(2), 5, 1.0]
    expected = run(apply(autodiff, ""), "f_grad", args)
    ckpt = apply(autodiff, "tapeflow-checkpoint{snapshots=2}")
    assert "f_grad_ckpt1_seg" in str(ckpt)
    assert run(ckpt, "f_grad", args) == expected


def revolve_optimum(steps: int, snapshots: int) -> int:
    """Griewank & Walther's minimal number of forward steps to reverse `steps` steps with
    `snapshots` snapshots: r*T - C(s+r, s+1), r the least with T <= C(s+r, s)."""
    r = 0
    while comb(snapshots + r, snapshots) < steps:
        r += 1
    return r * steps - comb(snapshots + r, snapshots + 1) if r else 0


def _counted_run(module: ModuleOp, args: list[Any]) -> tuple[list[Any], dict[str, int]]:
    """Runs @f_grad; counts the steps each outlined step function runs (b - a per call)."""
    from benchmarks.kernels.harness import to_memref  # type: ignore[import-not-found]

    interp = make_interpreter(module)
    steps: dict[str, int] = {"adv": 0, "seg": 0}
    original = interp.call_op

    def call_op(callee, call_args):
        name = str(callee).lstrip("@")
        for kind in steps:
            if name.endswith(f"_{kind}"):
                steps[kind] += call_args[1] - call_args[0]
        return original(callee, call_args)

    interp.call_op = call_op  # type: ignore[method-assign]
    values = [to_memref(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    results = list(interp.call_op("f_grad", tuple(values)))
    return results + [list(v.data) for v in values if not isinstance(v, (int, float))], steps


def _loop_args(n: int) -> list[Any]:
    x = np.array([0.7, 0.9])
    return [x, np.zeros(2), n, 1.0]


@pytest.mark.parametrize("snapshots", [1, 2, 3, 4])
def test_binomial_recomputation_is_revolves_optimum(snapshots: int):
    autodiff = str(apply(LOOP, "tapeflow-autodiff"))
    plain = apply(autodiff, "")
    ckpt = apply(autodiff, f"tapeflow-checkpoint{{snapshots={snapshots}}}")
    for n in [*range(0, 13), 20, 35]:
        expected, _ = _counted_run(plain, _loop_args(n))
        got, steps = _counted_run(ckpt, _loop_args(n))
        assert got == expected, n
        assert steps["seg"] == n  # every step taped once, one at a time
        expected_adv = revolve_optimum(n, snapshots) + 1 if n else 0
        assert steps["adv"] == expected_adv, (n, snapshots)


@pytest.mark.parametrize("snapshots", [1, 3, 8])
def test_periodic_replays_each_step_once(snapshots: int):
    autodiff = str(apply(LOOP, "tapeflow-autodiff"))
    plain = apply(autodiff, "")
    ckpt = apply(autodiff, f"tapeflow-checkpoint{{snapshots={snapshots} schedule=periodic}}")
    for n in (0, 1, 5, 9):
        expected, _ = _counted_run(plain, _loop_args(n))
        got, steps = _counted_run(ckpt, _loop_args(n))
        assert got == expected, n
        assert steps == {"adv": n, "seg": n}


def test_revolve_optimum_formula_matches_a_direct_search():
    """The closed form against the recursion it solves (split l steps at m: advance m,
    reverse the right part with one snapshot fewer, then the left part)."""
    from functools import cache

    @cache
    def best(steps: int, snaps: int) -> int:
        if steps <= 1:
            return 0
        if snaps == 1:
            return steps * (steps - 1) // 2
        return min(m + best(steps - m, snaps - 1) + best(m, snaps) for m in range(1, steps))

    for snaps in range(1, 6):
        for steps in range(1, 40):
            assert revolve_optimum(steps, snaps) == best(steps, snaps)


@pytest.mark.parametrize("name", TIME_LOOP_KERNELS)
def test_kernels_bit_identical(name: str):
    autodiff = str(apply(KERNELS[name].source("small"), "tapeflow-autodiff"))
    args = grad_args(name)
    entry = f"{name}_grad"
    expected = run(apply(autodiff, ""), entry, args)
    for spec in (
        "tapeflow-checkpoint{snapshots=1}",
        "tapeflow-checkpoint{snapshots=2}",
        "tapeflow-checkpoint{snapshots=2 schedule=periodic}",
        "tapeflow-checkpoint{snapshots=8},tapeflow-regions,tapeflow-layers,tapeflow-stream",
    ):
        assert run(apply(autodiff, spec), entry, args) == expected, spec


def test_pipeline_option_streams_the_segment_tape():
    name = "mass_spring"
    source = KERNELS[name].source("small")
    args = grad_args(name)
    expected = run(apply(source, "tapeflow-autodiff"), f"{name}_grad", args)
    module = apply(source, "tapeflow{checkpoint=binomial-8 mode=always}")
    assert run(module, f"{name}_grad", args) == expected
    names = [o.name for o in module.walk()]
    assert "tape.push" not in names
    assert "stream.commit" in names
    assert "tapeflow.snapshot" in str(module)


@pytest.mark.skipif(not native.tools_available(), reason="upstream MLIR 22 is not installed")
def test_native_equals_interpreter():
    from helpers.runs import assert_same_run, copy_args

    from tapeflow.runner import make_arguments, run_function

    module = apply(KERNELS["mass_spring"].source("small"), "tapeflow{checkpoint=binomial-2 mode=always}")
    from tapeflow.runner import find_function

    args = make_arguments(
        find_function(module, "mass_spring_grad"), seed=0, inputs={}, scalars=["1.0"]
    )
    expected = run_function(module, "mass_spring_grad", copy_args(args))
    actual = native.run_function_native(module, "mass_spring_grad", copy_args(args))
    assert_same_run(expected, actual)


def test_fuzzer_programs_bit_identical():
    """Random programs (the fuzzer's generator) whose gradient has a top-level loop with a
    tape: schedules and snapshot counts in turn. Seeds 2, 46, 54, 55 store into the
    loop's buffers after the loop (the reverse sweep must leave them as it found them)."""
    from fuzz.checks import N, grad_args, observe, primal_args
    from fuzz.program import generate
    from tapeflow.dialects.tape import PushOp
    from xdsl.dialects import func as func_dialect
    from xdsl.dialects import scf

    specs = ("snapshots=1", "snapshots=3", "snapshots=2 schedule=periodic")
    checked = 0
    for seed in (2, 46, 54, 55, *range(0, 24)):  # 8 or more that qualify
        program = generate(seed)
        if program.float_type != "f64":
            continue
        ad = apply(program.render(), "tapeflow-autodiff")
        grad = next(o for o in ad.ops if isinstance(o, func_dialect.FuncOp)
                    and o.sym_name.data == "f_grad")  # fmt: skip
        if not any(isinstance(o, scf.ForOp) and any(isinstance(q, PushOp) for q in o.walk())
                   for o in grad.body.block.ops):  # fmt: skip
            continue
        rng = np.random.default_rng(seed)
        weights = [rng.uniform(-1, 1, N), rng.uniform(-1, 1, N)]
        args = grad_args(primal_args(program, "f64"), weights, 1.0)
        expected = observe(ad, "f_grad", args)
        spec = specs[checked % len(specs)]
        got = observe(apply(str(ad), f"tapeflow-checkpoint{{{spec}}}"), "f_grad", args)
        assert got == expected, (seed, spec)
        checked += 1
    assert checked >= 8
