"""Interpreter semantics of the `tape` dialect: a cache is a LIFO stack."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.interpreter import OpCounter
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import parse_module
from tapeflow.interpreters import make_interpreter
from tapeflow.registry import make_context


def run(src: str, name: str, *args, listeners=()):
    module = parse_module(make_context(), src, "tape.mlir")
    module.verify()
    return make_interpreter(module, listeners=listeners).call_op(name, args)


STRAIGHT = """
func.func @three(%a: f64, %b: f64, %c: f64) -> (f64, f64, f64) {
  %t = tape.init : !tape.cache<f64>
  tape.push %t, %a : !tape.cache<f64>
  tape.push %t, %b : !tape.cache<f64>
  tape.push %t, %c : !tape.cache<f64>
  %x = tape.pop %t : !tape.cache<f64>
  %y = tape.pop %t : !tape.cache<f64>
  %z = tape.pop %t : !tape.cache<f64>
  tape.free %t : !tape.cache<f64>
  func.return %x, %y, %z : f64, f64, f64
}

func.func @mixed(%a: i32, %b: index) -> (index, i32) {
  %i = tape.init capacity = 4 : !tape.cache<i32>
  %j = tape.init : !tape.cache<index>
  tape.push %i, %a : !tape.cache<i32>
  tape.push %j, %b : !tape.cache<index>
  %y = tape.pop %j : !tape.cache<index>
  %x = tape.pop %i : !tape.cache<i32>
  func.return %y, %x : index, i32
}

func.func @pop_empty(%a: f64) -> f64 {
  %t = tape.init : !tape.cache<f64>
  tape.push %t, %a : !tape.cache<f64>
  %x = tape.pop %t : !tape.cache<f64>
  %y = tape.pop %t : !tape.cache<f64>
  func.return %y : f64
}

func.func @free_nonempty(%a: f64) {
  %t = tape.init : !tape.cache<f64>
  tape.push %t, %a : !tape.cache<f64>
  tape.push %t, %a : !tape.cache<f64>
  %x = tape.pop %t : !tape.cache<f64>
  tape.free %t : !tape.cache<f64>
  func.return
}

func.func @leak(%a: f64) -> !tape.cache<f64> {
  %t = tape.init : !tape.cache<f64>
  tape.push %t, %a : !tape.cache<f64>
  func.return %t : !tape.cache<f64>
}
"""


def test_pops_in_reverse_push_order():
    assert run(STRAIGHT, "three", 1.0, 2.0, 3.0) == (3.0, 2.0, 1.0)


def test_caches_are_independent():
    assert run(STRAIGHT, "mixed", 7, 11) == (11, 7)


def test_runtime_value_is_a_list():
    (cache,) = run(STRAIGHT, "leak", 2.5)
    assert cache == [2.5]


def test_pop_on_empty_cache_names_the_op_and_location():
    with pytest.raises(InterpretationError) as info:
        run(STRAIGHT, "pop_empty", 1.0)
    message = str(info.value)
    assert "'tape.pop' pop on empty cache" in message
    # The second pop of @pop_empty, at column 3.
    lines = STRAIGHT.splitlines()
    start = lines.index("func.func @pop_empty(%a: f64) -> f64 {")
    line = lines.index("  %y = tape.pop %t : !tape.cache<f64>", start) + 1
    assert f"tape.mlir:{line}:3" in message


def test_free_with_values_left_is_an_error():
    with pytest.raises(InterpretationError, match=r"'tape.free' cache freed with 1 value"):
        run(STRAIGHT, "free_nonempty", 1.0)


def test_push_pop_counts():
    counter = OpCounter()
    run(STRAIGHT, "three", 1.0, 2.0, 3.0, listeners=(counter,))
    assert counter.ops["tape.push"] == 3
    assert counter.ops["tape.pop"] == 3
    assert counter.ops["tape.init"] == 1


# A program that runs any sequence of pushes and pops: codes[i] == 1 pushes values[i],
# codes[i] == 0 pops into popped[i].
SEQUENCE = """
func.func @run(%n: index, %codes: memref<?xi64>, %values: memref<?xf64>,
               %popped: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %push = arith.constant 1 : i64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %n step %c1 {
    %code = memref.load %codes[%i] : memref<?xi64>
    %is_push = arith.cmpi eq, %code, %push : i64
    scf.if %is_push {
      %v = memref.load %values[%i] : memref<?xf64>
      tape.push %t, %v : !tape.cache<f64>
    } else {
      %v = tape.pop %t : !tape.cache<f64>
      memref.store %v, %popped[%i] : memref<?xf64>
    }
  }
  func.return
}
"""

_SEQUENCE_MODULE = None


def _sequence_interpreter():
    global _SEQUENCE_MODULE
    if _SEQUENCE_MODULE is None:
        _SEQUENCE_MODULE = parse_module(make_context(), SEQUENCE, "seq.mlir")
        _SEQUENCE_MODULE.verify()
    return make_interpreter(_SEQUENCE_MODULE)


operations = st.lists(
    st.tuples(st.booleans(), st.floats(allow_nan=False, allow_infinity=False)), max_size=40
)


@settings(max_examples=60, deadline=None)
@given(operations)
def test_any_push_pop_sequence_behaves_as_a_stack(ops: list[tuple[bool, float]]):
    n = len(ops)
    codes = ShapedArray(TypedPtr.new_int64([1 if push else 0 for push, _ in ops]), [n])
    values = ShapedArray(TypedPtr.new_float64([v for _, v in ops]), [n])
    popped = ShapedArray(TypedPtr.new_float64([-1.0] * n), [n])

    # The oracle: a Python list used as a stack; None when a pop finds it empty.
    stack: list[float] = []
    expected = [-1.0] * n
    underflow = False
    for i, (push, v) in enumerate(ops):
        if push:
            stack.append(v)
        elif not stack:
            underflow = True
            break
        else:
            expected[i] = stack.pop()

    interpreter = _sequence_interpreter()
    if underflow:
        with pytest.raises(InterpretationError, match="pop on empty cache"):
            interpreter.call_op("run", (n, codes, values, popped))
    else:
        interpreter.call_op("run", (n, codes, values, popped))
        assert popped.data == expected
