"""Compile-time facts about integer values: affine maps as Python, proven value ranges
(what lets the generated code skip bounds checks and wrapping) and the accesses of a
loop body affine in its induction variable (`Stream`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

INDEX_BITWIDTH = 64
"""The interpreter's index width on this (64-bit) host."""

I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1


def int_width(t: Any) -> int | None:
    if isinstance(t, IndexType):
        return INDEX_BITWIDTH
    if isinstance(t, IntegerType):
        return t.width.data
    return None


def affine_expr(e: AffineExpr, dims: Sequence[str], syms: Sequence[str]) -> str:
    if isinstance(e, AffineConstantExpr):
        return str(e.value)
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    if isinstance(e, AffineBinaryOpExpr):
        lhs = affine_expr(e.lhs, dims, syms)
        rhs = affine_expr(e.rhs, dims, syms)
        match e.kind:
            case AffineBinaryOpKind.Add:
                return f"({lhs} + {rhs})"
            case AffineBinaryOpKind.Mul:
                return f"({lhs} * {rhs})"
            case AffineBinaryOpKind.Mod:
                return f"({lhs} % {rhs})"
            case AffineBinaryOpKind.FloorDiv:
                return f"({lhs} // {rhs})"
            case AffineBinaryOpKind.CeilDiv:
                return f"(-((-{lhs}) // {rhs}))"
    raise TypeError(f"unknown affine expression {e}")


def affine_plain(*maps: AffineMap) -> bool:
    """No `//` or `%` in the maps' Python: a loop kernel takes them (no integer division)."""
    kinds = (AffineBinaryOpKind.Add, AffineBinaryOpKind.Mul)
    return all(not isinstance(e, AffineBinaryOpExpr) or e.kind in kinds
               for m in maps for r in m.results for e in r.dfs())  # fmt: skip


def affine_results(m: AffineMap, operands: Sequence[str]) -> list[str]:
    dims = operands[: m.num_dims]
    syms = operands[m.num_dims :]
    return [affine_expr(r, dims, syms) for r in m.results]


Interval = tuple[int, int]


def interval(sym: str, a: Interval, b: Interval) -> Interval:
    """[lo, hi] of `x sym y` for x in a, y in b (sym: + - *)."""
    if sym == "+":
        return a[0] + b[0], a[1] + b[1]
    if sym == "-":
        return a[0] - b[1], a[1] - b[0]
    products = [x * y for x in a for y in b]
    return min(products), max(products)


def fits_i64(r: Interval | None) -> bool:
    return r is not None and I64_MIN <= r[0] and r[1] <= I64_MAX


def affine_interval(
    e: AffineExpr, dims: Sequence[Interval | None], syms: Sequence[Interval | None]
) -> Interval | None:
    """[lo, hi] of an affine expression over operand ranges (None: unknown)."""
    if isinstance(e, AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    if not isinstance(e, AffineBinaryOpExpr):
        return None
    lhs = affine_interval(e.lhs, dims, syms)
    rhs = affine_interval(e.rhs, dims, syms)
    if lhs is None or rhs is None:
        return None
    match e.kind:
        case AffineBinaryOpKind.Add:
            return interval("+", lhs, rhs)
        case AffineBinaryOpKind.Mul:
            return interval("*", lhs, rhs)
        case AffineBinaryOpKind.Mod if rhs[0] == rhs[1] > 0:
            return 0, rhs[0] - 1
        case AffineBinaryOpKind.FloorDiv if rhs[0] == rhs[1] > 0:
            return lhs[0] // rhs[0], lhs[1] // rhs[0]
        case AffineBinaryOpKind.CeilDiv if rhs[0] == rhs[1] > 0:
            return -(-lhs[0] // rhs[0]), -(-lhs[1] // rhs[0])
        case _:
            return None


def affine_ranges(m: AffineMap, operands: Sequence[Interval | None]) -> list[Interval | None]:
    dims, syms = operands[: m.num_dims], operands[m.num_dims :]
    return [affine_interval(r, dims, syms) for r in m.results]


@dataclass
class Stream:
    """The DRAM accesses of a bulk-counted loop body, when each one's offset is affine
    in the induction variable with a constant coefficient (`_for_loop` then also emits a
    variant without per-access `_A` calls: `Trace.stream` appends the addresses)."""

    iv: SSAValue
    inside: set[SSAValue]  # values defined in the body (not loop-invariant)
    sites: list[tuple[str, int]] = field(default_factory=list)
    """Per access in program order: (invariant part of the encoded access, iv coefficient)."""
    lines: set[int] = field(default_factory=set)  # indices of their `_A` lines
    ok: bool = True

    def affine(self, v: SSAValue, names: dict[SSAValue, str]) -> tuple[str, int] | None:
        """`v` as (invariant expression, constant coefficient of the iv), or None."""
        if v is self.iv:
            return "0", 1
        if v not in self.inside:
            return names[v], 0
        op = v.owner
        if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp) or not isinstance(
            v.type, IndexType
        ):
            return None
        x, y = self.affine(op.lhs, names), self.affine(op.rhs, names)
        if x is None or y is None:
            return None
        if isinstance(op, arith.AddiOp):
            return f"({x[0]} + {y[0]})", x[1] + y[1]
        if isinstance(op, arith.SubiOp):
            return f"({x[0]} - {y[0]})", x[1] - y[1]
        if y[1] == 0 and (x[1] == 0 or _is_int_literal(y[0])):
            return f"({x[0]} * {y[0]})", x[1] * (int(y[0].strip("()")) if x[1] else 0)
        if x[1] == 0 and _is_int_literal(x[0]):
            return f"({x[0]} * {y[0]})", y[1] * int(x[0].strip("()"))
        return None


def _is_int_literal(text: str) -> bool:
    return text.strip("()").lstrip("-").isdigit()
