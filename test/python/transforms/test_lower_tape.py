"""`tapeflow-lower-tape` executes exactly as the tape ops it replaces, and its address
stream is Enzyme's: forward pushes at increasing addresses, reverse pops decreasing.

The inputs are the hand-written autodiff-shaped functions of test/tapeflow-lower-tape/,
run in the interpreter before (tape ops as Python lists) and after the pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.utils.exceptions import InterpretationError


from tapeflow.transforms.lower_tape import LowerTapePass

from benchmarks.kernels.harness import parse, run
from tapeflow.registry import make_context
from helpers.paths import ROOT

CASES = ROOT / "test" / "tapeflow-lower-tape"


def _chunks(name: str) -> list[str]:
    return (CASES / name).read_text().split("\n// -----\n")


def _lowered(text: str) -> ModuleOp:
    module = parse(text)
    LowerTapePass().apply(make_context(), module)
    module.verify()
    assert not [op for op in module.walk() if op.dialect_name() == "tape"]
    return module


def _both(text: str, entry: str, args: list[Any]) -> tuple[Any, Any]:
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    before = run(parse(text), entry, a)
    after = run(_lowered(text), entry, b)
    return before, after


def _same(before, after) -> None:
    (r1, m1), (r2, m2) = before, after
    assert r1 == r2  # bit for bit (Python floats compare exactly)
    for x, y in zip(m1, m2, strict=True):
        if not isinstance(x, (int, float)):
            assert x.data == y.data


def test_indexed_nest_executes_identically():
    rng = np.random.default_rng(0)
    text = _chunks("indexed.mlir")[0]
    before, after = _both(text, "f_grad", [rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 3)), 1.0])
    _same(before, after)


def test_rank0_and_normalized_indices():
    text = _chunks("indexed.mlir")[1]
    before, after = _both(text, "norm_grad", [0.3, 5])
    _same(before, after)
    assert after[0][1] == 5 * (2 + 5 + 8)


@pytest.mark.parametrize("chunk", [0, 1])
def test_stacks_execute_identically(chunk: int):
    rng = np.random.default_rng(chunk)
    text = _chunks("stack.mlir")[chunk]
    if chunk == 0:
        args = [rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8)]
        entry = "cond_grad"
    else:
        args, entry = [1.1], "two_sites"
    before, after = _both(text, entry, args)
    _same(before, after)


@pytest.mark.parametrize("n", [0, 1, 4, 5, 37])
def test_runtime_sized_stack(n: int):
    text = _chunks("runtime.mlir")[0]
    x = np.arange(n, dtype=np.float64) * 0.5
    before, after = _both(text, "dyn_grad", [x, n])
    _same(before, after)
    assert after[0][0] == pytest.approx(x.sum())


def test_growable_grows_past_its_hint():
    # 19 pushes into a buffer of initial capacity 4: grows to 8, 16 then 32.
    text = _chunks("growable.mlir")[0]
    counts = np.array([3, 0, 8, 1, 5, 2], dtype=np.int64)
    x = np.linspace(-0.9, 0.8, 48).reshape(6, 8)
    before, after = _both(text, "ragged_grad", [counts, x])
    _same(before, after)
    assert after[0][0] != 0.0


def test_triangular_nest_gets_a_static_stack():
    """Exact capacity: 5 + 4 + ... + 0 = 15 pushes (the worst-case bound was 30)."""
    text = _chunks("stack.mlir")[2]
    x = np.linspace(-0.9, 0.8, 6)
    before, after = _both(text, "tri_grad", [x])
    _same(before, after)
    allocs = [op for op in _lowered(text).walk() if isinstance(op, memref.AllocOp)]
    assert sorted(str(op.memref.type) for op in allocs) == ["memref<15xf64>", "memref<index>"]


def test_while_loop_cache():
    text = _chunks("growable.mlir")[1]
    before, after = _both(text, "while_grad", [0.0])
    _same(before, after)
    assert after[0] == (45,)


def test_pop_on_empty_stack_is_an_error():
    # One more pop than pushes: the stack layout asserts, naming the pop.
    text = """
    func.func @bad(%n: index) -> f64 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = arith.constant 0.0 : f64
      %c = tape.init : !tape.cache<f64>
      scf.for %i = %c0 to %n step %c1 {
        tape.push %c, %z : !tape.cache<f64>
      }
      %n1 = arith.addi %n, %c1 : index
      %s = scf.for %k = %c0 to %n1 step %c1 iter_args(%a = %z) -> (f64) {
        %v = tape.pop %c : !tape.cache<f64>
        scf.yield %v : f64
      }
      func.return %s : f64
    }
    """
    with pytest.raises(InterpretationError, match=r"<kernel>:12:9: 'memref.load' index \[-1\] out of bounds"):
        run(_lowered(text), "bad", [3])


class _TapeTrace(Interpreter.Listener):
    """Records the linear addresses of loads and stores into the tape buffers."""

    def __init__(self, buffers: set[int]):
        self.buffers = buffers
        self.stores: list[int] = []
        self.loads: list[int] = []

    def will_interpret_op(self, op, args) -> None:
        if isinstance(op, memref.StoreOp) and id(op.memref.owner) in self.buffers:
            self.stores.append(_linear(args[1].shape, args[2:]))
        if isinstance(op, memref.LoadOp) and id(op.memref.owner) in self.buffers:
            self.loads.append(_linear(args[0].shape, args[1:]))


def _linear(shape, indices) -> int:
    offset = 0
    for dim, i in zip(shape, indices, strict=True):
        offset = offset * dim + i
    return offset


@pytest.mark.parametrize(("name", "chunk", "entry", "args"), [
    ("indexed.mlir", 0, "f_grad", [np.ones((4, 3)), np.ones((4, 3)), 1.0]),
    ("stack.mlir", 0, "cond_grad", [np.linspace(-1, 1, 8), np.ones(8)]),
    ("stack.mlir", 1, "two_sites", [1.1]),
    ("stack.mlir", 2, "tri_grad", [np.linspace(-0.9, 0.8, 6)]),
])
def test_address_stream_is_enzymes(name, chunk, entry, args):
    module = _lowered(_chunks(name)[chunk])
    # Tape buffers of f64 values (the i1 cache of cond_grad is checked the same way by
    # the kernels' test; here the f64 stacks and arrays).
    buffers = {
        id(op) for op in module.walk()
        if isinstance(op, memref.AllocOp) and "tapeflow.tape" in op.attributes
        and str(op.memref.type.element_type) == "f64"
    }
    assert buffers
    trace = _TapeTrace(buffers)
    run(module, entry, args, listeners=(trace,))
    assert trace.stores, "no push was lowered to a store"
    assert trace.stores == sorted(set(trace.stores)), "forward pushes not increasing"
    assert trace.loads == sorted(set(trace.loads), reverse=True), "reverse pops not decreasing"
    assert sorted(trace.loads) == sorted(trace.stores)


def test_per_iteration_cache_sized_at_run_time():
    text = _chunks("runtime.mlir")[1]
    counts = np.array([3, 0, 8], dtype=np.int64)
    x = np.linspace(-1, 1, 24).reshape(3, 8)
    before, after = _both(text, "per_row_grad", [counts, x])
    _same(before, after)
    # Inside the outer loop, before the inner one: a dynamic alloc per outer iteration.
    module = _lowered(text)
    allocs = [op for op in module.walk() if isinstance(op, memref.AllocOp)]
    assert any(op.dynamic_sizes for op in allocs)
    assert all(op.parent_op().name == "scf.for" for op in allocs)


@pytest.mark.parametrize("expr, want", [
    ("addi i8 100 100", -56),
    ("subi i8 -100 100", 56),
    ("muli i64 4611686018427387904 4", 0),
    ("divsi index -7 2", -3),
    ("ceildivsi index -7 2", -3),
    ("ceildivsi index 7 2", 4),
    ("floordivsi index -7 2", -4),
    ("remsi index -7 2", -1),
    ("divui i64 -8 2", 2**63 - 4),
    ("divui index 7 0", None),
    ("maxsi i32 -3 5", 5),
])
def test_fold_int_folds_by_the_ops_semantics(expr, want):
    """Trip counts and capacities fold as the op computes: wrapping at the result's
    width, unsigned division unsigned, a division by zero no constant (wants written
    from C's and MLIR's definitions, not from the table)."""
    from tapeflow.transforms.analysis.constants import fold_int

    op, ty, a, b = expr.split()
    module = parse(f"""func.func @f() -> {ty} {{
  %a = arith.constant {a} : {ty}
  %b = arith.constant {b} : {ty}
  %r = arith.{op} %a, %b : {ty}
  func.return %r : {ty}
}}""")
    ret = next(o for o in module.walk() if o.name == "func.return")
    assert fold_int(ret.operands[0]) == want
