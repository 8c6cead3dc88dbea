"""Emitters of scalar ops: constants, arith and math (from the one table of
`tapeflow.semantics`: its Python floats, f32 rounding, integer wrapping unless the value's
range is proven), comparisons, select and affine.apply."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import affine, arith, builtin
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.comparisons import to_signed

from tapeflow.hwmodel import jit
from tapeflow.hwmodel.compiled.compiler import EMITTERS, FunctionCompiler, emitter
from tapeflow.hwmodel.compiled.limits import UnsupportedOpError
from tapeflow.hwmodel.compiled.ranges import (
    I64_MAX,
    I64_MIN,
    INDEX_BITWIDTH,
    affine_plain,
    affine_ranges,
    affine_results,
    fits_i64,
    int_width,
    interval,
)
from tapeflow.semantics import SCALARS, cmpu, scalar_type



@emitter("arith.constant")
def _constant(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """Constants become literals at their uses (or `_K[i]` for inf/nan)."""
    assert isinstance(op, arith.ConstantOp)
    value = op.value
    if isinstance(value, IntegerAttr):
        v = value.value.data
        if isinstance(value.type, IndexType):
            v = to_signed(v, INDEX_BITWIDTH)
        c.names[op.result] = f"({v!r})" if v < 0 else repr(v)
        c.ranges[op.result] = (v, v)
        if not I64_MIN <= v <= I64_MAX:
            c.wide.add(c.names[op.result])
    elif isinstance(value, FloatAttr):
        v = value.value.data
        if math.isfinite(v):
            c.names[op.result] = f"({v!r})" if math.copysign(1.0, v) < 0 else repr(v)
        else:
            c.names[op.result] = c.cm.const(v)
    else:
        c.fallback(op, indent)


_INT_BIN = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}
_INT_BITS = {"arith.andi": "&", "arith.ori": "|", "arith.xori": "^"}


def _bin(c: FunctionCompiler, op: Operation) -> tuple[str, str, str]:
    return c.define(op.results[0]), c.use(op.operands[0]), c.use(op.operands[1])


def _rounded(c: FunctionCompiler, op: Operation, indent: int, expr: str,
             reads: Sequence[str], jit_expr: str) -> None:  # fmt: skip
    """Emit `result = expr` rounded to the result's float type (f64 or f32,
    `_float_type_ok`); `jit_expr`: what a loop kernel computes instead."""
    r = c.names[op.results[0]]
    f32 = isinstance(op.results[0].type, builtin.Float32Type)
    text, jit_text = (f"{r} = _f32({e})" if f32 else f"{r} = {e}" for e in (expr, jit_expr))
    c.emit(indent, text, "py", reads, [r], jit_text)


def _float_type_ok(op: Operation) -> bool:
    return isinstance(op.results[0].type, builtin.Float64Type | builtin.Float32Type)


def _scalar(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """A scalar op with an inline expression in the table (`tapeflow.semantics`): `float`
    entries for f64/f32 results (f32 rounded), `exact` ones for any float type."""
    entry = SCALARS[op.name]
    if entry.kind == "float" and not _float_type_ok(op):
        return c.fallback(op, indent)
    r = c.define(op.results[0])
    args = [c.use(v) for v in op.operands]
    expr = entry.inline.format(*args)  # type: ignore[union-attr]
    jit_expr = jit.INLINE.get(op.name, entry.inline).format(*args)  # type: ignore[union-attr]
    if entry.kind == "exact":
        c.emit(indent, f"{r} = {expr}", "py", args, [r], f"{r} = {jit_expr}")
    else:
        _rounded(c, op, indent, expr, args, jit_expr)


def _typed(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """A `typed` table entry (casts): its inline form for these types, behind its check
    (a failing check runs the interpreter's op: its error); else the interpreter's op."""
    entry = SCALARS[op.name]
    tys = [scalar_type(v.type, INDEX_BITWIDTH) for v in (*op.operands, *op.results)]
    expr = None if None in tys else entry.inline_for(*tys)  # type: ignore[misc]
    if expr is None:
        return c.fallback(op, indent)
    args = [c.use(v) for v in op.operands]
    if entry.check is not None:
        c.check(indent, entry.check(*tys).format(*args), op, args, args)
    r = c.define(op.results[0])
    c.py(indent, f"{r} = {expr.format(*args)}", args, [r], all(t.width <= 64 for t in tys))  # type: ignore[union-attr]


for _entry in SCALARS.values():
    if _entry.inline is not None and _entry.kind in ("float", "exact"):
        EMITTERS[_entry.name] = _scalar
    elif _entry.inline_for is not None:
        EMITTERS[_entry.name] = _typed


@emitter(*_INT_BIN)
def _int_bin(c: FunctionCompiler, op: Operation, indent: int) -> None:
    w = int_width(op.results[0].type)
    if w is None:
        return c.fallback(op, indent)
    sym = _INT_BIN[op.name]
    ra, rb = c.range_of(op.operands[0]), c.range_of(op.operands[1])
    rr = interval(sym, ra, rb) if ra is not None and rb is not None else None
    if w == 64:
        a, b = c.use(op.operands[0]), c.use(op.operands[1])
        unit = "1" if sym == "*" else "0"
        if b == unit:  # x+0, x-0, x*1: the result is x's value
            kept: SSAValue | None = op.operands[0]
        elif a == unit and sym != "-":  # 0+x, 1*x (checked second: `0 + 0` keeps either)
            kept = op.operands[1]
        else:
            kept = None
        if kept is not None:
            c.names[op.results[0]] = c.use(kept)
            if (kr := c.range_of(kept)) is not None:
                c.ranges[op.results[0]] = kr
            return
        if rr is not None and rr[0] == rr[1]:  # both constants
            v = to_signed(rr[0], 64)
            c.names[op.results[0]] = f"({v})" if v < 0 else repr(v)
            c.ranges[op.results[0]] = (v, v)
            return
    r, a, b = _bin(c, op)
    if w == 64:
        c.py(indent, f"{r} = {a} {sym} {b}", [a, b], [r])
        if fits_i64(rr):  # no wrap possible
            c.ranges[op.results[0]] = rr  # type: ignore[assignment]
        else:  # a kernel's int64 arithmetic wraps by itself
            c.emit(indent, f"if not {I64_MIN} <= {r} <= {I64_MAX}: {r} = _wrap({r}, 64)",
                   "wrap64", [r], [r])  # fmt: skip
    else:
        c.py(indent, f"{r} = _wrap(_wrap({a}, {w}) {sym} _wrap({b}, {w}), {w})", [a, b], [r],
             w < 64)  # fmt: skip


@emitter(*_INT_BITS)
def _int_bits(c: FunctionCompiler, op: Operation, indent: int) -> None:
    w = int_width(op.results[0].type)
    if w is None:
        return c.fallback(op, indent)
    r, a, b = _bin(c, op)
    c.py(indent, f"{r} = _wrap(_wrap({a}, {w}) {_INT_BITS[op.name]} _wrap({b}, {w}), {w})",
         [a, b], [r], w <= 64)  # fmt: skip


@emitter("arith.shrsi")
def _shrsi(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """A shift by a constant in [0, width): Python's `>>` on the signed value, as the
    interpreter computes it (arithmetic shift, no wrap needed)."""
    w = int_width(op.results[0].type)
    b = _constant_value(c, op.operands[1])
    if w is None or b is None or not 0 <= b < w:
        return c.fallback(op, indent)
    r, a, _ = _bin(c, op)
    c.py(indent, f"{r} = {a if w == 64 else f'_wrap({a}, {w})'} >> {b}", [a], [r], w <= 64)
    if w == 64 and (ra := c.range_of(op.operands[0])) is not None:
        c.ranges[op.results[0]] = (ra[0] >> b, ra[1] >> b)


def _constant_value(c: FunctionCompiler, v: SSAValue) -> int | None:
    r = c.range_of(v)
    return r[0] if r is not None and r[0] == r[1] else None


def _fold(c: FunctionCompiler, op: Operation) -> bool:
    """Folds a 64-bit integer op of constants with the interpreter's own implementation
    (so the value is the interpreter's); False if an operand is not constant or the
    interpreter reports an error (then the op runs, and fails, at run time)."""
    values = [_constant_value(c, v) for v in op.operands]
    if any(v is None for v in values):
        return False
    try:
        (value,) = c.cm.run_op(op, tuple(values))
    except Exception:
        return False
    value = to_signed(int(value), 64)
    c.names[op.results[0]] = f"({value})" if value < 0 else repr(value)
    c.ranges[op.results[0]] = (value, value)
    return True


def _division(c: FunctionCompiler, op: Operation,
              indent: int) -> tuple[int, str, str, str] | None:  # fmt: skip
    """(width, result, dividend, divisor) of an integer division to emit; None when it
    is done: the interpreter's (not an integer type), or folded (constants)."""
    w = int_width(op.results[0].type)
    if w is None:
        c.fallback(op, indent)
        return None
    if w == 64 and _fold(c, op):
        return None
    return (w, *_bin(c, op))


@emitter("arith.divsi", "arith.remsi", "arith.floordivsi")
def _int_div(c: FunctionCompiler, op: Operation, indent: int) -> None:
    if (division := _division(c, op, indent)) is None:
        return
    w, r, a, b = division
    rb = c.range_of(op.operands[1])
    if rb is None or rb[0] <= 0 <= rb[1]:  # a zero divisor: the interpreter's error
        c.emit(indent, f"if {b} == 0: _RUN({c.cm.const(op)}, ({a}, {b}))")
    entry = SCALARS[op.name]
    if w == 64 and entry.inline64:
        d = c.fresh("d") if any("{d}" in t for t in entry.inline64) else r
        for text in entry.inline64:
            c.emit(indent, text.format(a, b, r=r, d=d))
        return
    c.emit(indent, f"{r} = {entry.inline.format(a, b, w=w)}")  # type: ignore[union-attr]


@emitter("arith.divui", "arith.remui")
def _unsigned_div(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """Python's `//` or `%` when both operands are non-negative as signed values (then
    their unsigned values are the same at any width: a trip count over a step, as in
    Enzyme-MLIR's reversed loops), else the interpreter's implementation (which also
    reports a zero divisor), not an interpreter call in every iteration."""
    if c.wide.intersection(c.use(v) for v in op.operands):  # a literal beyond int64
        return c.fallback(op, indent)
    if (division := _division(c, op, indent)) is None:
        return
    _, r, a, b = division
    sign = "//" if op.name == "arith.divui" else "%"
    c.emit(indent, f"{r} = {a} {sign} {b} if {a} >= 0 and {b} > 0 "
                   f"else _RUN({c.cm.const(op)}, ({a}, {b}))[0]")  # fmt: skip


_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}


@emitter("arith.cmpi")
def _cmpi(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, arith.CmpiOp)
    w = int_width(op.lhs.type)
    if w is None:
        return c.fallback(op, indent)
    p = op.predicate.value.data
    if p not in _CMPI:
        return c.fallback(op, indent)
    x, y = _constant_value(c, op.lhs), _constant_value(c, op.rhs)
    if x is not None and y is not None:  # both constant: a literal
        x, y = cmpu(x, y, w) if p >= 6 else (to_signed(x, w), to_signed(y, w))
        c.names[op.results[0]] = repr(bool(eval(f"{x} {_CMPI[p]} {y}")))
        return
    r, a, b = _bin(c, op)
    if p >= 6:
        c.emit(indent, f"_x, _y = _cmpu({a}, {b}, {w})")
        c.emit(indent, f"{r} = _x {_CMPI[p]} _y")
    elif w == 64:
        c.py(indent, f"{r} = {a} {_CMPI[p]} {b}", [a, b], [r])
    else:
        c.py(indent, f"{r} = _wrap({a}, {w}) {_CMPI[p]} _wrap({b}, {w})", [a, b], [r], w < 64)


_CMPF = {
    0: "False",
    1: "{x} == {y}",
    2: "{x} > {y}",
    3: "{x} >= {y}",
    4: "{x} < {y}",
    5: "{x} <= {y}",
    6: "({x} != {y} and {x} == {x} and {y} == {y})",
    7: "({x} == {x} and {y} == {y})",
    8: "({x} == {y} or {x} != {x} or {y} != {y})",
    9: "not ({x} <= {y})",
    10: "not ({x} < {y})",
    11: "not ({x} >= {y})",
    12: "not ({x} > {y})",
    13: "{x} != {y}",
    14: "({x} != {x} or {y} != {y})",
    15: "True",
}


@emitter("arith.cmpf")
def _cmpf(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, arith.CmpfOp)
    r, a, b = _bin(c, op)
    c.py(indent, f"{r} = {_CMPF[op.predicate.value.data].format(x=a, y=b)}", [a, b], [r])


@emitter("arith.select")
def _select(c: FunctionCompiler, op: Operation, indent: int) -> None:
    if isinstance(op.operands[1].type, MemRefType):
        raise UnsupportedOpError(op, "fast path: select of memrefs")
    cond = c.use(op.operands[0])
    if cond in ("True", "False"):  # a constant condition (a folded cmpi): the operand
        chosen = op.operands[1] if cond == "True" else op.operands[2]
        c.names[op.results[0]] = c.use(chosen)
        if (rc := c.range_of(chosen)) is not None:
            c.ranges[op.results[0]] = rc
        return
    r = c.define(op.results[0])
    a, b = c.use(op.operands[1]), c.use(op.operands[2])
    c.py(indent, f"{r} = {a} if {cond} else {b}", [a, cond, b], [r])
    if a in c.records and b in c.records:  # double-buffered scratchpad tiles
        c.records[r] = c.records[a]
    ra, rb = c.range_of(op.operands[1]), c.range_of(op.operands[2])
    if ra is not None and rb is not None:
        c.ranges[op.results[0]] = (min(ra[0], rb[0]), max(ra[1], rb[1]))


@emitter("affine.apply")
def _affine_apply(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.ApplyOp)
    args = [c.use(v) for v in op.operands]
    (e,) = affine_results(op.map.data, args)
    r = c.define(op.results[0])
    c.py(indent, f"{r} = {e}", args, [r], affine_plain(op.map.data))
    (r,) = affine_ranges(op.map.data, [c.range_of(v) for v in op.operands])
    if r is not None:
        c.ranges[op.results[0]] = r
