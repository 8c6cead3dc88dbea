"""What `enzyme-autodiff` does before Enzyme-MLIR (`tapeflow.baselines.pre_enzyme`): each
step keeps the primal's values and our own gradient bit for bit and leaves the module
itself alone; with them Enzyme-MLIR's gradient agrees with ours on the kernels its bugs
broke or refused (alexnet, logsum, lenet, fft), without them it does not; TapeFlow's
passes on the tape Enzyme then builds keep its gradient bit for bit.

Tests that run Enzyme-MLIR skip, naming the extra, when it is not installed."""

from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, func, memref, scf

from tapeflow.baselines import enzyme_mlir, pre_enzyme
from tapeflow.eval.agreement import normwise_error, relative_error
from tapeflow.eval.bundled import with_shadows
from tapeflow.eval.jobs import tapeflow_options
from tapeflow.eval.suites import KERNELS
from tapeflow.frontends.c import compile_c
from tapeflow.machines import pipeline
from tapeflow.registry import make_context
from tapeflow.runner import load_module, run_function
from tapeflow.simulate import simulate_fast

pytestmark = pytest.mark.xdist_group("pre_enzyme")  # the translations are shared

needs_enzyme = pytest.mark.skipif(
    not enzyme_mlir.available(),
    reason="needs the optional extra `enzyme` (pip install --no-deps enzyme-ad==0.0.16)",
)

CASES = {"alexnet": {}, "logsum": {"N": 20}, "lenet": {}, "fft": {}}
"""Salam kernels at their small sizes but logsum's: N = 20 makes its 8-unrolled loop run
twice (0 to 16 step 8), a step that does not divide 16 - 1. fft calls functions that
write memory (Enzyme-MLIR refuses such a call: inlined, it takes them)."""


def _kernel(name: str):
    """The salam kernel `name` with a size "t": its small sizes and `CASES[name]`."""
    k = KERNELS[name]
    return dataclasses.replace(k, sizes={**k.sizes, "t": {**k.sizes["small"], **CASES[name]}})


def _compile(k):
    """`k` through the C frontend: a clone of the one translation per kernel (the tests
    translate each kernel seven times, and the frontend is most of their time)."""
    return _translation(str(k.path), tuple(k.defines("t")), k.entry).clone()


@functools.cache
def _translation(path: str, defines: tuple[str, ...], entry: str):
    return compile_c(Path(path).read_text(), path, list(defines), functions=[entry])


def _entry(module, name: str) -> func.FuncOp:
    return next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)


def _bits(values) -> list[bytes]:
    return [np.asarray(v, dtype=np.float64).tobytes() for v in values]


def _gradient(k, module, variant: str) -> list:
    """`@<entry>_grad`'s arguments after a run of `variant`'s program (the fast path)."""
    ctx = make_context()
    for p in pipeline(variant, tapeflow_options()):
        p.apply(ctx, module)
    args = with_shadows(k.args, k.inputs("t", 0))
    simulate_fast(module, k.grad_entry, args)
    return args


@pytest.mark.parametrize("name", sorted(CASES))
def test_steps_keep_the_primal_and_our_gradient(name: str):
    """On each kernel the steps rewrite something; the module they were given is unchanged;
    the primal's result and our AD's gradient of the prepared function keep every bit."""
    k = _kernel(name)
    module = _compile(k)
    text = str(module)
    ready = pre_enzyme.prepared(module, k.entry)
    assert str(module) == text
    loops = [op for op in _entry(ready, k.entry).walk() if isinstance(op, scf.ForOp)]
    assert all(isinstance(op.step.owner, arith.ConstantOp)
               and op.step.owner.value.value.data == 1 for op in loops)  # fmt: skip
    assert str(ready) != text
    inputs = k.inputs("t", 0)
    results = [simulate_fast(m, k.entry, copy.deepcopy(inputs)).run.results
               for m in (module, ready)]  # fmt: skip
    assert _bits(results[0]) == _bits(results[1])
    ours, prepared = (_gradient(k, m, "enzyme") for m in (module, ready))
    assert _bits(ours) == _bits(prepared)


RUNTIME_STEP = """
func.func @s(%m: memref<10xf64>, %lb: index, %ub: index) -> f64 {
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %lb to %ub step %c3 iter_args(%a = %z) -> (f64) {
    %x = memref.load %m[%i] : memref<10xf64>
    %n = arith.index_cast %i : index to i64
    %w = arith.sitofp %n : i64 to f64
    %y = arith.mulf %x, %w : f64
    %b = arith.addf %a, %y : f64
    scf.yield %b : f64
  }
  return %r : f64
}
"""


def test_normalize_steps_takes_runtime_bounds():
    """A loop of step 3 between run-time bounds runs from 0 by 1 to ceildiv(ub - lb, 3):
    the same iterations, every result bit for bit, none when ub <= lb."""
    module = load_module(RUNTIME_STEP)
    ready = load_module(RUNTIME_STEP)
    assert pre_enzyme.normalize_steps(ready, _entry(ready, "s")) == 1
    ready.verify()
    (loop,) = [op for op in ready.walk() if isinstance(op, scf.ForOp)]
    assert isinstance(loop.ub.owner, arith.CeilDivSIOp)
    m = np.linspace(0.5, 5.0, 10)
    for lb, ub in ((0, 10), (1, 10), (2, 9), (0, 1), (5, 5), (7, 3)):
        before, after = (run_function(x, "s", [m.copy(), lb, ub]).results for x in (module, ready))
        assert _bits(before) == _bits(after), (lb, ub)


ACCUMULATE = """
func.func @p(%m: memref<12xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %n = arith.constant TRIPS : index
  %zero = arith.constant 0.0 : f64
  scf.for %j = %c0 to %c2 step %c1 {
    %x = arith.addi %j, %c4 : index
    memref.store %zero, %m[%x] : memref<12xf64>
    scf.for %k = %c0 to %n step %c1 {
      %a = memref.load %m[%x] : memref<12xf64>
      READ
      %b = memref.load %m[%r] : memref<12xf64>
      %p = arith.mulf %b, %b : f64
      %s = arith.addf %a, %p : f64
      memref.store %s, %m[%x] : memref<12xf64>
    }
  }
  %out = memref.load %m[%c4] : memref<12xf64>
  return %out : f64
}
"""
"""m[j + 4] accumulates m[r]^2 over k < TRIPS, after a zero (READ defines r)."""

READS = {
    "below": ("%r = arith.addi %k, %c0 : index", 3, True),  # r = k <= 2 < 4
    "reaches": ("%r = arith.addi %k, %c0 : index", 5, False),  # r = k = 4 when j = 0
    "shifted": ("%r = arith.addi %x, %k : index", 3, False),  # r = x + k = x when k = 0
    "ahead": ("%t = arith.addi %j, %k : index\n      %r = arith.addi %t, %c5 : index", 3, True),
}
"""READ, TRIPS, and whether the loop's other load provably never reads m[x]. "ahead": r = j +
k + 5 meets x = j + 4's range [4, 5] (at j = 0, k = 0: r = 5), but r - x = k + 1 >= 1 in
every iteration: j cancels, as in lenet's pooling."""


@pytest.mark.parametrize("case", sorted(READS))
def test_promote_accumulators_only_where_nothing_else_touches_it(case: str):
    """m[x] kept in a register through `for k` when the loop's other load provably never
    reads it; the zero stored before the loop is what it starts from (no load of m before
    it). Otherwise nothing moves. The results and m keep their bits either way."""
    read, trips, promote = READS[case]
    text = ACCUMULATE.replace("READ", read).replace("TRIPS", str(trips))
    module, ready = load_module(text), load_module(text)
    promoted = pre_enzyme.promote_accumulators(ready, _entry(ready, "p"))
    ready.verify()
    inner = [op for op in ready.walk() if isinstance(op, scf.ForOp)][1]
    outer_loads = [op for op in inner.parent_block().ops if isinstance(op, memref.LoadOp)]
    if promote:
        assert promoted == 1 and len(inner.iter_args) == 1 and not outer_loads
        assert isinstance(inner.iter_args[0].owner, arith.ConstantOp)
    else:
        assert promoted == 0 and str(ready) == str(module)
    m = np.linspace(-1.0, 2.5, 12)
    before, after = m.copy(), m.copy()
    runs = [run_function(x, "p", [a]).results for x, a in ((module, before), (ready, after))]
    assert _bits(runs[0]) == _bits(runs[1]) and _bits(before) == _bits(after)


@functools.cache
def _our_gradient(name: str) -> list:
    """Our gradient of `_kernel(name)` (the same with and without `pre_enzyme.STEPS`, which
    only Enzyme-MLIR's variant takes): computed once for both `_disagreement`s."""
    k = _kernel(name)
    return _gradient(k, _compile(k), "enzyme")


def _disagreement(k) -> float:
    """The largest relative error, per array and per entry, of Enzyme-MLIR's gradient
    against ours; infinite when Enzyme's program fails (out of bounds)."""
    ours = _our_gradient(k.name)
    try:
        theirs = _gradient(k, _compile(k), "enzyme-mlir")
    except Exception:  # an access out of bounds, the bugs' symptom, or a refusal
        return float("inf")
    return max(max(normwise_error(a, b), relative_error(a, b))
               for a, b in zip(ours, theirs, strict=True) if isinstance(a, np.ndarray))  # fmt: skip


@pytest.mark.enzyme
@needs_enzyme
@pytest.mark.parametrize("name", sorted(CASES))
def test_enzyme_agrees_after_the_steps(name: str, monkeypatch):
    """With the steps Enzyme-MLIR's gradient is within 1e-12 of ours; without them (what
    it did before) it runs out of bounds (alexnet's cache, logsum's reverse loop), keeps
    the adjoint of what lenet's pooling overwrites with a constant, or refuses fft."""
    k = _kernel(name)
    assert _disagreement(k) <= 1e-12
    monkeypatch.setattr(pre_enzyme, "STEPS", ())
    assert _disagreement(k) > 1e-12


@pytest.mark.enzyme
@needs_enzyme
@pytest.mark.parametrize("name", sorted(CASES))
def test_tapeflow_on_enzymes_tape_after_the_steps(name: str):
    """TapeFlow's passes on the tape Enzyme-MLIR builds for the prepared kernel (imported,
    regions, layers, streamed, lowered) keep Enzyme's gradient bit for bit."""
    from tapeflow.baselines.enzyme_tape import ImportEnzymeTapePass
    from tapeflow.transforms.layers import LayersPass
    from tapeflow.transforms.lower_tape import LowerTapePass
    from tapeflow.transforms.regions import RegionsPass
    from tapeflow.transforms.stream import StreamPass

    k = _kernel(name)
    runs = []
    for passes in ([], [ImportEnzymeTapePass(), RegionsPass(), LayersPass(spm_bytes=1024),
                        StreamPass(), LowerTapePass()]):  # fmt: skip
        module, ctx = _compile(k), make_context()
        for p in [enzyme_mlir.EnzymeAutodiffPass(), *passes]:
            p.apply(ctx, module)
        assert not passes or not any(op.name.startswith("enzyme.") for op in module.walk())
        args = with_shadows(k.args, k.inputs("t", 0))
        runs.append(_bits([*args, *simulate_fast(module, k.grad_entry, args).run.results]))
    assert runs[0] == runs[1]
