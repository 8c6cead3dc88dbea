"""Adjoints of the `arith` ops (`DiffeRet` is the adjoint of the result, `d` below).

| op                 | contribution                                          |
|--------------------|-------------------------------------------------------|
| addf a, b          | da += d ; db += d                                     |
| subf a, b          | da += d ; db += -d                                    |
| mulf a, b          | da += d*b ; db += d*a                                 |
| divf a, b          | da += d/b ; db += -(d*a)/(b*b)                        |
| negf a             | da += -d                                              |
| maximumf/maxnumf   | the operand that was selected gets d (a on ties)      |
| minimumf/minnumf   | same, with <=                                         |
| select c, a, b     | da += c ? d : 0 ; db += c ? 0 : d                     |
| extf / truncf      | da += extf/truncf(d) back to a's type                 |
| constant, sitofp, uitofp, integer ops, cmp* | nothing (no float input) |
"""

from __future__ import annotations

from tapeflow.transforms.autodiff.builder import ReverseBuilder, Rule
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue


def _ins(g: ReverseBuilder, op: Operation) -> SSAValue:
    return g.b.insert(op).results[0]


def mul(g: ReverseBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    return _ins(g, arith.MulfOp(a, b))


def div(g: ReverseBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    return _ins(g, arith.DivfOp(a, b))


def neg(g: ReverseBuilder, a: SSAValue) -> SSAValue:
    return _ins(g, arith.NegfOp(a))


def select(g: ReverseBuilder, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return _ins(g, arith.SelectOp(c, a, b))


def _result_adjoint(g: ReverseBuilder, op: Operation) -> SSAValue | None:
    return g.adjoint(op.results[0])


def _addf(g: ReverseBuilder, op: arith.AddfOp) -> None:
    if (d := _result_adjoint(g, op)) is None:
        return
    g.accumulate(op.lhs, d)
    g.accumulate(op.rhs, d)


def _subf(g: ReverseBuilder, op: arith.SubfOp) -> None:
    if (d := _result_adjoint(g, op)) is None:
        return
    g.accumulate(op.lhs, d)
    if g.is_active(op.rhs):
        g.accumulate(op.rhs, neg(g, d))


def _mulf(g: ReverseBuilder, op: arith.MulfOp) -> None:
    if (d := _result_adjoint(g, op)) is None:
        return
    if g.is_active(op.lhs):
        g.accumulate(op.lhs, mul(g, d, g.primal(op.rhs)))
    if g.is_active(op.rhs):
        g.accumulate(op.rhs, mul(g, d, g.primal(op.lhs)))


def _divf(g: ReverseBuilder, op: arith.DivfOp) -> None:
    if (d := _result_adjoint(g, op)) is None:
        return
    b = g.primal(op.rhs)
    if g.is_active(op.lhs):
        g.accumulate(op.lhs, div(g, d, b))
    if g.is_active(op.rhs):
        a = g.primal(op.lhs)
        g.accumulate(op.rhs, neg(g, div(g, mul(g, d, a), mul(g, b, b))))


def _negf(g: ReverseBuilder, op: arith.NegfOp) -> None:
    if (d := _result_adjoint(g, op)) is None:
        return
    g.accumulate(op.operand, neg(g, d))


def _select_between(g: ReverseBuilder, op: Operation, c: SSAValue) -> None:
    """`d` goes to lhs where `c` holds and to rhs elsewhere."""
    d = _result_adjoint(g, op)
    if d is None:
        return
    lhs, rhs = op.operands[-2], op.operands[-1]
    zero = g.const(0.0, d.type)
    if g.is_active(lhs):
        g.accumulate(lhs, select(g, c, d, zero))
    if g.is_active(rhs):
        g.accumulate(rhs, select(g, c, zero, d))


def _extremum(predicate: str) -> Rule:
    def rule(g: ReverseBuilder, op: Operation) -> None:
        if _result_adjoint(g, op) is None:
            return
        a, b = g.primal(op.operands[0]), g.primal(op.operands[1])
        c = _ins(g, arith.CmpfOp(a, b, predicate))
        _select_between(g, op, c)

    return rule


def _select(g: ReverseBuilder, op: arith.SelectOp) -> None:
    if _result_adjoint(g, op) is None:
        return
    _select_between(g, op, g.primal(op.cond))


def _convert(cls: type[arith.ExtFOp] | type[arith.TruncFOp]) -> Rule:
    def rule(g: ReverseBuilder, op: Operation) -> None:
        if (d := _result_adjoint(g, op)) is None:
            return
        (src,) = op.operands
        back = arith.TruncFOp if cls is arith.ExtFOp else arith.ExtFOp
        g.accumulate(src, _ins(g, back(d, src.type)))

    return rule


def _nothing(g: ReverseBuilder, op: Operation) -> None:
    """No float operand carries a derivative (constants, int->float casts)."""


RULES: dict[type[Operation], Rule] = {
    arith.AddfOp: _addf,
    arith.SubfOp: _subf,
    arith.MulfOp: _mulf,
    arith.DivfOp: _divf,
    arith.NegfOp: _negf,
    arith.MaximumfOp: _extremum("oge"),
    arith.MaxnumfOp: _extremum("oge"),
    arith.MinimumfOp: _extremum("ole"),
    arith.MinnumfOp: _extremum("ole"),
    arith.SelectOp: _select,
    arith.ExtFOp: _convert(arith.ExtFOp),
    arith.TruncFOp: _convert(arith.TruncFOp),
    arith.ConstantOp: _nothing,
    arith.SIToFPOp: _nothing,
    arith.UIToFPOp: _nothing,
}
