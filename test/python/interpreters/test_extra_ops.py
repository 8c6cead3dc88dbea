"""The interpreter functions of tapeflow.interpreters.extra_ops, op by op, against Python's
math / NumPy (the oracle), in f64 and f32."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from xdsl.interpreter import Interpreter
from xdsl.interpreters import register_implementations
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import parse_module
from tapeflow.interpreters.extra_ops import register_extra_ops, round_float
from tapeflow.registry import make_context


def _interpreter(src: str) -> Interpreter:
    ctx = make_context()
    module = parse_module(ctx, src, "t.mlir")
    module.verify()
    interpreter = Interpreter(module)
    register_implementations(interpreter, ctx)
    register_extra_ops(interpreter)
    return interpreter


def run(src: str, *args):
    """Calls @f of `src` with `args`."""
    return _interpreter(src).call_op("f", args)


def run_op(op: str, arg_types: list[str], result_types: list[str], *args):
    """Runs the single op `op` (generic syntax) on `args`; returns its results."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    operands = ", ".join(f"%a{i}" for i in range(len(arg_types)))
    results = ", ".join(f"%r{i}" for i in range(len(result_types)))
    rtypes = ", ".join(result_types)
    src = f"""
func.func @f({params}) -> ({rtypes}) {{
  {results} = "{op}"({operands}) : ({", ".join(arg_types)}) -> ({rtypes})
  func.return {results} : {rtypes}
}}
"""
    return run(src, *args)


def f32(x: float) -> float:
    return float(np.float32(x))


def same(actual: float, expected: float) -> bool:
    """Bit-identical floats (NaN equals NaN, -0.0 differs from 0.0)."""
    return struct.pack("<d", actual) == struct.pack("<d", expected) or (
        math.isnan(actual) and math.isnan(expected)
    )


# ------------------------------------------------------------------------------------
# math: unary ops, exactly Python's math in f64, and that result rounded to f32 in f32.

UNARY = [
    ("math.tanh", math.tanh, 0.7),
    ("math.sin", math.sin, 0.5),
    ("math.cos", math.cos, 0.5),
    ("math.tan", math.tan, 1.2),
    ("math.asin", math.asin, 0.3),
    ("math.acos", math.acos, 0.3),
    ("math.atan", math.atan, 2.5),
    ("math.sinh", math.sinh, 1.3),
    ("math.cosh", math.cosh, 1.3),
    ("math.asinh", math.asinh, 1.3),
    ("math.acosh", math.acosh, 1.3),
    ("math.atanh", math.atanh, 0.3),
    ("math.exp", math.exp, 1.7),
    ("math.exp2", math.exp2, 1.7),
    ("math.expm1", math.expm1, 1e-5),
    ("math.log", math.log, 3.3),
    ("math.log2", math.log2, 3.3),
    ("math.log10", math.log10, 3.3),
    ("math.log1p", math.log1p, 1e-5),
    ("math.sqrt", math.sqrt, 2.0),
    ("math.rsqrt", lambda x: 1.0 / math.sqrt(x), 2.0),
    ("math.erf", math.erf, 0.4),
    ("math.cbrt", math.cbrt, 10.0),
    ("math.absf", abs, -2.5),
    ("math.floor", lambda x: float(math.floor(x)), -1.5),
    ("math.ceil", lambda x: float(math.ceil(x)), 1.2),
    ("math.trunc", lambda x: float(math.trunc(x)), -1.7),
    ("math.round", lambda x: 3.0, 2.5),  # half away from zero
    ("math.round", lambda x: -3.0, -2.5),
    ("math.roundeven", lambda x: 2.0, 2.5),
    ("math.roundeven", lambda x: 4.0, 3.5),
]


@pytest.mark.parametrize(("op", "oracle", "x"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_f64(op, oracle, x):
    (r,) = run_op(op, ["f64"], ["f64"], x)
    assert same(r, oracle(x)), (r, oracle(x))


@pytest.mark.parametrize(("op", "oracle", "x"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_f32(op, oracle, x):
    x = f32(x)
    (r,) = run_op(op, ["f32"], ["f32"], x)
    assert same(r, f32(oracle(x))), (r, f32(oracle(x)))
    assert same(r, f32(r))  # representable in float32


@pytest.mark.parametrize(
    ("op", "x", "expected"),
    [
        ("math.log", 0.0, -math.inf),
        ("math.log", -1.0, math.nan),
        ("math.sqrt", -1.0, math.nan),
        ("math.exp", 1000.0, math.inf),
        ("math.rsqrt", 0.0, math.inf),
        ("math.log1p", -1.0, -math.inf),
        ("math.cosh", 1000.0, math.inf),
        ("math.acosh", 0.5, math.nan),
        ("math.floor", -0.0, -0.0),
        ("math.floor", math.inf, math.inf),
        ("math.round", -0.3, -0.0),
        ("math.round", 0.49999999999999994, 0.0),
        ("math.absf", -0.0, 0.0),
    ],
)
def test_unary_ieee_edges(op, x, expected):
    (r,) = run_op(op, ["f64"], ["f64"], x)
    assert same(r, expected), (r, expected)


def test_f32_overflow_is_inf():
    (r64,) = run_op("math.exp", ["f64"], ["f64"], 100.0)
    (r32,) = run_op("math.exp", ["f32"], ["f32"], 100.0)
    assert math.isfinite(r64)
    assert r32 == math.inf


BINARY = [
    ("math.powf", math.pow, 2.0, 0.5),
    ("math.powf", math.pow, 1.7, -3.2),
    ("math.atan2", math.atan2, 1.0, -1.0),
    ("math.copysign", math.copysign, 2.0, -0.0),
    ("arith.divf", lambda x, y: x / y, 1.0, 3.0),
    ("arith.addf", lambda x, y: x + y, 0.1, 0.2),
    ("arith.subf", lambda x, y: x - y, 0.1, 0.3),
    ("arith.mulf", lambda x, y: x * y, 0.1, 0.7),
]


@pytest.mark.parametrize(("op", "oracle", "x", "y"), BINARY, ids=[b[0] for b in BINARY])
def test_binary_f64(op, oracle, x, y):
    (r,) = run_op(op, ["f64", "f64"], ["f64"], x, y)
    assert same(r, oracle(x, y))


@pytest.mark.parametrize(("op", "oracle", "x", "y"), BINARY, ids=[b[0] for b in BINARY])
def test_binary_f32(op, oracle, x, y):
    x, y = f32(x), f32(y)
    (r,) = run_op(op, ["f32", "f32"], ["f32"], x, y)
    assert same(r, f32(oracle(x, y)))


def test_f32_addf_differs_from_f64():
    # 0.1f + 0.2f in f32 is not the f64 sum of the same two values: rounding happens.
    x, y = f32(0.1), f32(0.2)
    (r,) = run_op("arith.addf", ["f32", "f32"], ["f32"], x, y)
    assert r == float(np.float32(x) + np.float32(y))
    assert r != x + y


@pytest.mark.parametrize(
    ("op", "x", "y", "expected"),
    [
        ("arith.divf", 1.0, 0.0, math.inf),
        ("arith.divf", -1.0, 0.0, -math.inf),
        ("arith.divf", 1.0, -0.0, -math.inf),
        ("arith.divf", 0.0, 0.0, math.nan),
        ("math.powf", -8.0, 1.0 / 3.0, math.nan),
        ("math.powf", 0.0, -1.0, math.inf),
        ("math.powf", 10.0, 400.0, math.inf),
        ("arith.maxnumf", math.nan, 1.0, 1.0),
        ("arith.maxnumf", 1.0, math.nan, 1.0),
        ("arith.maxnumf", -0.0, 0.0, 0.0),
        ("arith.maxnumf", -2.0, 3.0, 3.0),
        ("arith.minnumf", 1.0, math.nan, 1.0),
        ("arith.minnumf", 0.0, -0.0, -0.0),
        ("arith.minnumf", -2.0, 3.0, -2.0),
    ],
)
def test_binary_edges(op, x, y, expected):
    (r,) = run_op(op, ["f64", "f64"], ["f64"], x, y)
    assert same(r, expected), (r, expected)


def test_negf_flips_sign_of_zero():
    (r,) = run_op("arith.negf", ["f64"], ["f64"], 0.0)
    assert same(r, -0.0)
    (r,) = run_op("arith.negf", ["f32"], ["f32"], f32(1.5))
    assert r == -1.5


def test_fma_rounds_once():
    a, b, c = 1.0 + 2.0**-30, 1.0 - 2.0**-30, -1.0
    assert a * b + c == 0.0  # two roundings lose it
    (r,) = run_op("math.fma", ["f64", "f64", "f64"], ["f64"], a, b, c)
    assert r == -(2.0**-60)


@pytest.mark.parametrize(("a", "b", "c", "expected"), [
    (1e308, -3.7, math.inf, math.inf),  # the product overflows only once rounded
    (1e308, 10.0, -1e308, math.inf),  # exactly 9e308: beyond the largest double
    (0.0, math.inf, 1.0, math.nan),
])  # fmt: skip
def test_fma_of_huge_and_infinite_operands(a, b, c, expected):
    (r,) = run_op("math.fma", ["f64", "f64", "f64"], ["f64"], a, b, c)
    assert same(r, expected)


@pytest.mark.parametrize(
    ("x", "n", "expected"), [(1.5, 3, 3.375), (2.0, -2, 0.25), (-2.0, 3, -8.0), (5.0, 0, 1.0)]
)
def test_fpowi(x, n, expected):
    (r,) = run_op("math.fpowi", ["f64", "i32"], ["f64"], x, n)
    assert r == expected


@pytest.mark.parametrize(
    ("op", "type_", "args", "expected"),
    [
        ("math.absi", "i32", (-5,), 5),
        ("math.absi", "i8", (-128,), -128),  # wraps
        ("math.ipowi", "i32", (3, 4), 81),
        ("math.ipowi", "i8", (2, 7), -128),  # 128 wraps
        ("math.ipowi", "i32", (2, -1), 0),
        ("math.ipowi", "i32", (-1, -3), -1),
        ("math.ctlz", "i32", (1,), 31),
        ("math.ctlz", "i8", (-1,), 0),
        ("math.cttz", "i32", (8,), 3),
        ("math.cttz", "i16", (0,), 16),
        ("math.ctpop", "i8", (-1,), 8),
        ("arith.maxsi", "i32", (-3, 2), 2),
        ("arith.minsi", "i32", (-3, 2), -3),
        ("arith.maxsi", "index", (-3, 2), 2),
        ("arith.maxui", "i8", (-1, 1), -1),  # 255 > 1
        ("arith.minui", "i8", (-1, 1), 1),
        ("arith.divui", "i8", (-1, 2), 127),  # 255 / 2
        ("arith.remui", "i8", (-1, 10), 5),  # 255 % 10
        ("arith.ceildivsi", "i32", (7, 2), 4),
        ("arith.ceildivsi", "i32", (-7, 2), -3),
        ("arith.ceildivsi", "i32", (7, -2), -3),
        ("arith.ceildivsi", "i32", (-8, 2), -4),
        ("arith.ceildivui", "i32", (7, 2), 4),
        ("arith.shrui", "i8", (-1, 4), 15),
        ("arith.shrui", "i8", (-1, 8), 0),
    ],
)
def test_integer_ops(op, type_, args, expected):
    (r,) = run_op(op, [type_] * len(args), [type_], *args)
    assert r == expected


@pytest.mark.parametrize("op", ["arith.divui", "arith.remui", "arith.ceildivsi"])
def test_integer_division_by_zero_is_an_error(op):
    with pytest.raises(InterpretationError, match="division by zero"):
        run_op(op, ["i32", "i32"], ["i32"], 1, 0)


@pytest.mark.parametrize(
    ("op", "src", "dst", "x", "expected"),
    [
        ("arith.sitofp", "i32", "f64", -7, -7.0),
        ("arith.sitofp", "i64", "f32", 2**53 + 1, float(np.float32(2**53 + 1))),
        ("arith.sitofp", "i64", "f32", 16777217, 16777216.0),  # 2^24+1 -> even
        ("arith.sitofp", "i1", "f64", True, -1.0),
        ("arith.uitofp", "i8", "f64", -1, 255.0),
        ("arith.uitofp", "i1", "f64", True, 1.0),
        ("arith.fptosi", "f64", "i32", 2.9, 2),
        ("arith.fptosi", "f64", "i32", -2.9, -2),
        ("arith.fptoui", "f64", "i8", 255.5, -1),  # 255 in signed canonical form
        ("arith.extf", "f32", "f64", f32(0.1), f32(0.1)),
        ("arith.truncf", "f64", "f32", 0.1, f32(0.1)),
        ("arith.truncf", "f64", "f32", 1e300, math.inf),
        ("arith.truncf", "f64", "f16", 0.1, float(np.float16(0.1))),
        ("arith.extsi", "i8", "i32", -1, -1),
        ("arith.extsi", "i1", "i32", True, -1),
        ("arith.extui", "i8", "i32", -1, 255),
        ("arith.extui", "i1", "i64", True, 1),
        ("arith.trunci", "i32", "i8", 300, 44),
        ("arith.trunci", "i32", "i8", 200, -56),
        ("arith.bitcast", "f64", "i64", 1.0, 0x3FF0000000000000),
        ("arith.bitcast", "i64", "f64", 0x3FF0000000000000, 1.0),
        ("arith.bitcast", "f64", "i64", -2.0, struct.unpack("<q", struct.pack("<d", -2.0))[0]),
        ("arith.bitcast", "f32", "i32", 1.0, 0x3F800000),
        ("arith.bitcast", "i32", "f32", 0x3F800000, 1.0),
        ("arith.index_cast", "index", "i32", -5, -5),
    ],
)
def test_casts(op, src, dst, x, expected):
    (r,) = run_op(op, [src], [dst], x)
    assert same(float(r), float(expected)) if isinstance(expected, float) else r == expected
    assert type(r) is type(expected) or isinstance(expected, float) == isinstance(r, float)


@pytest.mark.parametrize(("x", "type_"), [(300.0, "i8"), (math.nan, "i32"), (math.inf, "i64")])
def test_fptosi_out_of_range_is_an_error(x, type_):
    with pytest.raises(InterpretationError, match=r"arith\.fptosi"):
        run_op("arith.fptosi", ["f64"], [type_], x)


@pytest.mark.parametrize(
    ("op", "type_", "a", "b", "expected"),
    [
        ("arith.addui_extended", "i8", -1, 1, (0, True)),
        ("arith.addui_extended", "i8", 3, 4, (7, False)),
        ("arith.mului_extended", "i8", -1, -1, (1, -2)),  # 255*255 = 0xFE01
        ("arith.mulsi_extended", "i8", -1, -1, (1, 0)),
        ("arith.mulsi_extended", "i8", -128, 2, (0, -1)),
    ],
)
def test_extended_ops(op, type_, a, b, expected):
    second = "i1" if op == "arith.addui_extended" else type_
    assert run_op(op, [type_, type_], [type_, second], a, b) == expected


def test_round_float():
    from xdsl.dialects.builtin import f16, f64
    from xdsl.dialects.builtin import f32 as F32

    assert round_float(f64, 0.1) == 0.1
    assert round_float(F32, 0.1) == float(np.float32(0.1)) != 0.1
    assert round_float(f16, 0.1) == float(np.float16(0.1))
    assert round_float(F32, 1e39) == math.inf


# ------------------------------------------------------------------------------------
# memref, scf, affine


def test_alloca_copy_dim_rank_dynamic_alloc():
    src = """
func.func @f(%n: index) -> (index, index, f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?x3xf64>
  %b = memref.alloca(%n) : memref<?x3xf64>
  %v = arith.constant 2.5 : f64
  memref.store %v, %a[%c1, %c1] : memref<?x3xf64>
  "memref.copy"(%a, %b) : (memref<?x3xf64>, memref<?x3xf64>) -> ()
  %d0 = "memref.dim"(%b, %c0) : (memref<?x3xf64>, index) -> index
  %r = "memref.rank"(%b) : (memref<?x3xf64>) -> index
  %x = memref.load %b[%c1, %c1] : memref<?x3xf64>
  %y = memref.load %b[%c0, %c1] : memref<?x3xf64>
  func.return %d0, %r, %x, %y : index, index, f64, f64
}
"""
    assert run(src, 5) == (5, 2, 2.5, 0.0)


def test_copy_is_a_copy_not_an_alias():
    src = """
func.func @f() -> f64 {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<2xf64>
  %b = memref.alloca() : memref<2xf64>
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  memref.store %one, %a[%c0] : memref<2xf64>
  "memref.copy"(%a, %b) : (memref<2xf64>, memref<2xf64>) -> ()
  memref.store %two, %a[%c0] : memref<2xf64>
  %x = memref.load %b[%c0] : memref<2xf64>
  func.return %x : f64
}
"""
    assert run(src) == (1.0,)


@pytest.mark.parametrize(("i", "j"), [(2, 0), (0, 3), (-1, 0)])
def test_load_out_of_bounds_is_an_error(i, j):
    src = """
func.func @f(%i: index, %j: index) -> f64 {
  %a = memref.alloca() : memref<2x3xf64>
  %x = memref.load %a[%i, %j] : memref<2x3xf64>
  func.return %x : f64
}
"""
    with pytest.raises(InterpretationError, match="out of bounds"):
        run(src, i, j)
    assert run(src, 1, 2) == (0.0,)


def test_store_out_of_bounds_is_an_error():
    src = """
func.func @f(%i: index) {
  %a = memref.alloca() : memref<4xf64>
  %b = memref.alloca() : memref<4xf64>
  %v = arith.constant 1.0 : f64
  memref.store %v, %a[%i] : memref<4xf64>
  func.return
}
"""
    with pytest.raises(InterpretationError, match=r"t.mlir:6:3: 'memref.store' index \[4\]"):
        run(src, 4)


def test_f32_memref_store_rounds():
    src = """
func.func @f(%v: f64) -> f32 {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<1xf32>
  %t = arith.truncf %v : f64 to f32
  memref.store %t, %a[%c0] : memref<1xf32>
  %x = memref.load %a[%c0] : memref<1xf32>
  func.return %x : f32
}
"""
    assert run(src, 0.1) == (f32(0.1),)


def test_collapse_and_expand_shape_alias():
    src = """
func.func @f() -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloca() : memref<2x3xf64>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x3xf64> into memref<6xf64>
  %v = arith.constant 7.0 : f64
  memref.store %v, %flat[%c4] : memref<6xf64>
  %x = memref.load %a[%c1, %c1] : memref<2x3xf64>
  %e = memref.expand_shape %flat [[0, 1]] output_shape [3, 2] : memref<6xf64> into memref<3x2xf64>
  %y = memref.load %e[%c1, %c0] : memref<3x2xf64>
  func.return %x, %y : f64, f64
}
"""
    # flat[4] is a[1][1] and e[2][0]; e[1][0] is flat[2], still zero.
    assert run(src) == (7.0, 0.0)


def test_cast_and_atomic_rmw():
    src = """
func.func @f(%v: f64) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<2xf64>
  %d = "memref.cast"(%a) : (memref<2xf64>) -> memref<?xf64>
  %old = "memref.atomic_rmw"(%v, %d, %c0) <{kind = 0 : i64}>
    : (f64, memref<?xf64>, index) -> f64
  %old2 = "memref.atomic_rmw"(%v, %d, %c0) <{kind = 0 : i64}>
    : (f64, memref<?xf64>, index) -> f64
  %x = memref.load %a[%c0] : memref<2xf64>
  func.return %old2, %x : f64, f64
}
"""
    assert run(src, 1.25) == (1.25, 2.5)


def test_scf_execute_region_and_parallel_reduce():
    src = """
func.func @f(%n: index) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.execute_region -> index {
    %t = arith.addi %n, %c1 : index
    scf.yield %t : index
  }
  %s = "scf.parallel"(%c0, %c0, %n, %c3, %c1, %c1, %c0) ({
  ^bb0(%i: index, %j: index):
    %p = arith.muli %i, %j : index
    "scf.reduce"(%p) ({
    ^bb1(%lhs: index, %rhs: index):
      %sum = arith.addi %lhs, %rhs : index
      "scf.reduce.return"(%sum) : (index) -> ()
    }) : (index) -> ()
  }) {operandSegmentSizes = array<i32: 2, 2, 2, 1>}
    : (index, index, index, index, index, index, index) -> index
  func.return %r, %s : index, index
}
"""
    n = 4
    assert run(src, n) == (n + 1, sum(i * j for i in range(n) for j in range(3)))


def test_affine_for_with_symbols_iter_args_if_min():
    src = """
func.func @f(%A: memref<10xf64>, %n: index) -> (f64, index) {
  %z = arith.constant 0.0 : f64
  %s = affine.for %i = 1 to min affine_map<()[s0] -> (s0, 8)>()[%n] iter_args(%acc = %z) -> (f64) {
    %x = "affine.load"(%A, %i, %n) <{map = affine_map<(d0)[s0] -> (d0 + s0 mod 3)>}>
      : (memref<10xf64>, index, index) -> f64
    %r = "affine.if"(%i) <{condition = affine_set<(d0) : (d0 - 3 >= 0)>}> ({
      "affine.yield"(%x) : (f64) -> ()
    }, {
      %zz = arith.constant 0.0 : f64
      "affine.yield"(%zz) : (f64) -> ()
    }) : (index) -> f64
    %t = arith.addf %acc, %r : f64
    affine.yield %t : f64
  }
  %m = affine.min affine_map<(d0)[s0] -> (d0 * 2, s0 + 1)>(%n)[%n]
  func.return %s, %m : f64, index
}
"""
    from xdsl.interpreters.shaped_array import ShapedArray
    from xdsl.interpreters.utils.ptr import TypedPtr

    data = [float(k) for k in range(10)]
    for n in (4, 6, 13):
        A = ShapedArray(TypedPtr.new_float64(data), [10])
        s, m = run(src, A, n)
        expected = sum(data[i + n % 3] for i in range(1, min(n, 8)) if i >= 3)
        assert s == expected
        assert m == min(2 * n, n + 1)


def test_make_interpreter_registers_extra_ops():
    from tapeflow.interpreters import make_interpreter

    src = """
func.func @f(%x: f32) -> f32 {
  %r = math.tanh %x : f32
  func.return %r : f32
}
"""
    module = parse_module(make_context(), src, "t.mlir")
    assert make_interpreter(module).call_op("f", (f32(0.3),)) == (f32(math.tanh(f32(0.3))),)


# ------------------------------------------------------------------------------------
# cf

ASSERT = """
func.func @f(%ok: i1) {
  cf.assert %ok, "MESSAGE"
  func.return
}
"""


def test_cf_assert_passes_when_true():
    assert run(ASSERT.replace("MESSAGE", "x"), True) == ()


def test_cf_assert_failure_names_the_assert():
    with pytest.raises(InterpretationError) as info:
        run(ASSERT.replace("MESSAGE", "size must be positive"), False)
    assert str(info.value) == "t.mlir:3:3: 'cf.assert' assertion failed: size must be positive"


def test_cf_assert_keeps_a_located_message():
    # TapeFlow's lowerings put the location of the op the assert stands for first.
    src = ASSERT.replace("MESSAGE", "k.mlir:7:5: 'tape.pop' pop on empty cache")
    with pytest.raises(InterpretationError) as info:
        run(src, False)
    assert str(info.value) == "k.mlir:7:5: 'tape.pop' pop on empty cache"


@pytest.mark.parametrize(("flag", "expected"), [(42, 1.0), (-1, 2.0), (0, 3.0)])
def test_cf_switch(flag, expected):
    src = """
func.func @f(%flag: i32) -> f64 {
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %three = arith.constant 3.0 : f64
  cf.switch %flag : i32, [
    default: ^bb3(%three : f64),
    42: ^bb1(%one : f64),
    -1: ^bb1(%two : f64)
  ]
^bb1(%v: f64):
  func.return %v : f64
^bb3(%w: f64):
  func.return %w : f64
}
"""
    assert run(src, flag) == (expected,)


# ------------------------------------------------------------------------------------
# memref views: subview and reinterpret_cast share the source's buffer.


def _matrix(rows: int, cols: int):
    from xdsl.interpreters.shaped_array import ShapedArray
    from xdsl.interpreters.utils.ptr import TypedPtr

    data = [float(k) for k in range(rows * cols)]
    return ShapedArray(TypedPtr.new_float64(data), [rows, cols]), np.arange(
        rows * cols, dtype=float
    ).reshape(rows, cols)


SUBVIEW = """
func.func @f(%A: memref<4x5xf64>, %r: index, %c: index) -> (f64, f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %row = memref.subview %A[%r, 1] [1, 3] [1, 1]
    : memref<4x5xf64> to memref<3xf64, strided<[1], offset: ?>>
  %col = memref.subview %A[0, %c] [2, 1] [2, 1]
    : memref<4x5xf64> to memref<2xf64, strided<[10], offset: ?>>
  %blk = memref.subview %A[1, 1] [2, 2] [1, 2]
    : memref<4x5xf64> to memref<2x2xf64, strided<[5, 2], offset: 6>>
  %sub = memref.subview %blk[1, 0] [1, 2] [1, 1]
    : memref<2x2xf64, strided<[5, 2], offset: 6>> to memref<2xf64, strided<[2], offset: 11>>
  %v = arith.constant -1.0 : f64
  memref.store %v, %row[%c2] : memref<3xf64, strided<[1], offset: ?>>
  %x = memref.load %col[%c1] : memref<2xf64, strided<[10], offset: ?>>
  %y = memref.load %sub[%c1] : memref<2xf64, strided<[2], offset: 11>>
  %z = memref.load %A[%r, %c3] : memref<4x5xf64>
  func.return %x, %y, %z : f64, f64, f64
}
"""


@pytest.mark.parametrize(("r", "c"), [(0, 0), (2, 3), (3, 4)])
def test_subview_reads_and_writes_the_source(r, c):
    A, ref = _matrix(4, 5)
    ref[r, 1 + 2] = -1.0  # row view element 2 is A[r, 3]
    x, y, z = run(SUBVIEW, A, r, c)
    assert x == ref[2, c]  # col view: rows 0, 2 of column c
    assert y == ref[2, 3]  # blk[1][1] = A[2][3]
    assert z == -1.0  # the store through the row view is in A
    assert A.data == ref.flatten().tolist()


def test_subview_out_of_bounds_is_an_error():
    A, _ = _matrix(4, 5)
    with pytest.raises(InterpretationError, match=r"'memref\.subview' dimension 1"):
        run(SUBVIEW, A, 0, 5)


def test_view_load_out_of_bounds_is_an_error():
    src = """
func.func @f(%A: memref<4x5xf64>, %i: index) -> f64 {
  %row = memref.subview %A[1, 0] [1, 5] [1, 1]
    : memref<4x5xf64> to memref<5xf64, strided<[1], offset: 5>>
  %x = memref.load %row[%i] : memref<5xf64, strided<[1], offset: 5>>
  func.return %x : f64
}
"""
    A, ref = _matrix(4, 5)
    assert run(src, A, 4) == (ref[1, 4],)
    with pytest.raises(InterpretationError, match="out of bounds"):
        run(src, A, 5)  # would be A[2][0] in the buffer: still an error


def test_copy_between_views():
    src = """
func.func @f(%A: memref<4x5xf64>) {
  %col0 = memref.subview %A[0, 0] [4, 1] [1, 1]
    : memref<4x5xf64> to memref<4xf64, strided<[5]>>
  %col4 = memref.subview %A[0, 4] [4, 1] [1, 1]
    : memref<4x5xf64> to memref<4xf64, strided<[5], offset: 4>>
  "memref.copy"(%col0, %col4)
    : (memref<4xf64, strided<[5]>>, memref<4xf64, strided<[5], offset: 4>>) -> ()
  func.return
}
"""
    A, ref = _matrix(4, 5)
    run(src, A)
    ref[:, 4] = ref[:, 0]
    assert A.data == ref.flatten().tolist()


def test_reinterpret_cast():
    src = """
func.func @f(%A: memref<4x5xf64>, %i: index, %j: index) -> f64 {
  %t = memref.reinterpret_cast %A to offset: [1], sizes: [5, 3], strides: [1, 5]
    : memref<4x5xf64> to memref<5x3xf64, strided<[1, 5], offset: 1>>
  %x = memref.load %t[%i, %j] : memref<5x3xf64, strided<[1, 5], offset: 1>>
  func.return %x : f64
}
"""
    A, ref = _matrix(4, 5)
    flat = ref.flatten()
    for i, j in [(0, 0), (4, 2), (2, 1)]:
        assert run(src, A, i, j) == (flat[1 + i + 5 * j],)


@pytest.mark.parametrize(
    ("kind", "type_", "old", "v", "expected"),
    [
        (5, "i8", -1, 1, -1),  # maxu: 255 > 1 (an unsigned comparison, as arith.maxui)
        (8, "i8", -1, 1, 1),  # minu
        (3, "f64", 1.0, float("nan"), "nan"),  # maximumf: NaN wins (as arith.maximumf)
        (6, "f64", 0.0, -0.0, "-0.0"),  # minimumf: -0 below +0
    ],
)
def test_atomic_rmw_kinds_have_their_ops_semantics(kind, type_, old, v, expected):
    src = f"""
func.func @f(%old: {type_}, %v: {type_}) -> {type_} {{
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<1x{type_}>
  memref.store %old, %a[%c0] : memref<1x{type_}>
  %r = "memref.atomic_rmw"(%v, %a, %c0) <{{kind = {kind} : i64}}>
    : ({type_}, memref<1x{type_}>, index) -> {type_}
  %x = memref.load %a[%c0] : memref<1x{type_}>
  func.return %x : {type_}
}}
"""
    (x,) = run(src, old, v)
    assert repr(x) == repr(expected) if isinstance(expected, int) else repr(x) == expected
