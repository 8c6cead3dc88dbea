"""Adjoints of the `math` ops, as in Enzyme's `MathDerivatives.td` (`d` = adjoint of y).

| op             | contribution                         |
|----------------|--------------------------------------|
| y = exp x      | dx += d*y                            |
| y = exp2 x     | dx += d*y*ln 2                       |
| y = expm1 x    | dx += d*(y+1)                        |
| y = log x      | dx += d/x                            |
| y = log2/log10 | dx += d/(x*ln b)                     |
| y = log1p x    | dx += d/(1+x)                        |
| y = sqrt x     | dx += d*0.5/y                        |
| y = rsqrt x    | dx += d*(-0.5)*y*y*y                 |
| y = sin x      | dx += d*cos x                        |
| y = cos x      | dx += -d*sin x                       |
| y = tanh x     | dx += d*(1-y*y)                      |
| y = atan x     | dx += d/(1+x*x)                      |
| y = tan x      | dx += d*(1+y*y)                      |
| asin/acos      | dx += +-d/sqrt(1-x*x)                |
| asinh/acosh    | dx += d/sqrt(x*x+-1)                 |
| atanh          | dx += d/(1-x*x)                      |
| erf            | dx += d*2/sqrt(pi)*exp(-x*x)         |
| cbrt           | dx += d/(3*y*y)                      |
| r = atan2 y, x | dy += d*x/(x*x+y*y); dx += -d*y/(x*x+y*y) |
| y = sinh/cosh  | dx += d*cosh x / d*sinh x            |
| y = powf a, b  | da += d*b*pow(a, b-1); db += d*y*log a (only if b is active) |
| y = fpowi a, n | da += d*n*fpowi(a, n-1)              |
| y = absf x     | dx += x < 0 ? -d : d                 |
| r = copysign a, b | da += (a*r >= 0 ? d : -d)          |
| y = fma a,b,c  | da += d*b; db += d*a; dc += d        |
| floor, ceil, round, roundeven, trunc | nothing (zero almost everywhere) |
"""

from __future__ import annotations

import math as pymath

from tapeflow.transforms.autodiff.builder import ReverseBuilder, Rule
from tapeflow.transforms.autodiff.rules.arith import div, mul, neg, select
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue


def _ins(g: ReverseBuilder, op: Operation) -> SSAValue:
    return g.b.insert(op).results[0]


def _add(g: ReverseBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    return _ins(g, arith.AddfOp(a, b))


def _unary(derivative) -> Rule:
    """A rule `dx += derivative(g, x, y, d)` for a one-operand op."""

    def rule(g: ReverseBuilder, op: Operation) -> None:
        d = g.adjoint(op.results[0])
        if d is None:
            return
        (x,) = op.operands
        g.accumulate(x, derivative(g, op, d))

    return rule


def _x(g: ReverseBuilder, op: Operation) -> SSAValue:
    return g.primal(op.operands[0])


def _y(g: ReverseBuilder, op: Operation) -> SSAValue:
    return g.primal(op.results[0])


def _c(g: ReverseBuilder, value: float, like: SSAValue) -> SSAValue:
    return g.const(value, like.type)


def _powf(g: ReverseBuilder, op: math.PowFOp) -> None:
    d = g.adjoint(op.result)
    if d is None:
        return
    a, b = g.primal(op.lhs), g.primal(op.rhs)
    if g.is_active(op.lhs):
        bm1 = _ins(g, arith.SubfOp(b, _c(g, 1.0, b)))
        g.accumulate(op.lhs, mul(g, d, mul(g, b, _ins(g, math.PowFOp(a, bm1)))))
    if g.is_active(op.rhs):
        # d(a^b)/db = a^b log a, whose limit at a = 0 (b > 0) is 0, not 0 * -inf = NaN
        # (as Enzyme gives: its pow_zero.c).
        y = g.primal(op.result)
        db = mul(g, d, mul(g, y, _ins(g, math.LogOp(a))))
        zero = _c(g, 0.0, a)
        at_zero = _ins(g, arith.CmpfOp(a, zero, "oeq"))
        g.accumulate(op.rhs, select(g, at_zero, zero, db))


def _fpowi(g: ReverseBuilder, op: math.FPowIOp) -> None:
    d = g.adjoint(op.result)
    if d is None:
        return
    a, n = g.primal(op.lhs), g.primal(op.rhs)
    one = g.b.insert(arith.ConstantOp(IntegerAttr(1, n.type))).result
    nm1 = _ins(g, arith.SubiOp(n, one))
    nf = _ins(g, arith.SIToFPOp(n, a.type))
    g.accumulate(op.lhs, mul(g, d, mul(g, nf, _ins(g, math.FPowIOp(a, nm1)))))


def _fma(g: ReverseBuilder, op: math.FmaOp) -> None:
    d = g.adjoint(op.result)
    if d is None:
        return
    if g.is_active(op.a):
        g.accumulate(op.a, mul(g, d, g.primal(op.b)))
    if g.is_active(op.b):
        g.accumulate(op.b, mul(g, d, g.primal(op.a)))
    g.accumulate(op.c, d)


def _atan2(g: ReverseBuilder, op: math.Atan2Op) -> None:
    """r = atan2(y, x): dy += d*x/(x*x+y*y), dx += -d*y/(x*x+y*y)."""
    d = g.adjoint(op.result)
    if d is None:
        return
    y, x = g.primal(op.lhs), g.primal(op.rhs)
    den = _add(g, mul(g, x, x), mul(g, y, y))
    if g.is_active(op.lhs):
        g.accumulate(op.lhs, div(g, mul(g, d, x), den))
    if g.is_active(op.rhs):
        g.accumulate(op.rhs, neg(g, div(g, mul(g, d, y), den)))


def _one_minus_x2(g: ReverseBuilder, op: Operation, sign: float = -1.0) -> SSAValue:
    """1 - x*x (sign=-1) or x*x + 1 (sign=+1) or x*x - 1 (sign=0)."""
    x = _x(g, op)
    x2 = mul(g, x, x)
    if sign < 0:
        return _ins(g, arith.SubfOp(_c(g, 1.0, x), x2))
    if sign > 0:
        return _add(g, x2, _c(g, 1.0, x))
    return _ins(g, arith.SubfOp(x2, _c(g, 1.0, x)))


def _sqrt(g: ReverseBuilder, v: SSAValue) -> SSAValue:
    return _ins(g, math.SqrtOp(v))


def _copysign(g: ReverseBuilder, op: math.CopySignOp) -> None:
    """r = copysign(a, b): da += d where r and a have the same sign, -d elsewhere."""
    d = g.adjoint(op.result)
    if d is None:
        return
    a, r = g.primal(op.lhs), g.primal(op.result)
    same = _ins(g, arith.CmpfOp(mul(g, a, r), _c(g, 0.0, a), "oge"))
    g.accumulate(op.lhs, select(g, same, d, neg(g, d)))


def _absf(g: ReverseBuilder, op: Operation, d: SSAValue) -> SSAValue:
    x = _x(g, op)
    negative = _ins(g, arith.CmpfOp(x, _c(g, 0.0, x), "olt"))
    return select(g, negative, neg(g, d), d)


def _nothing(g: ReverseBuilder, op: Operation) -> None:
    """Piecewise constant: the derivative is zero almost everywhere."""


RULES: dict[type[Operation], Rule] = {
    math.ExpOp: _unary(lambda g, op, d: mul(g, d, _y(g, op))),
    math.Exp2Op: _unary(lambda g, op, d: mul(g, d, mul(g, _y(g, op), _c(g, pymath.log(2.0), d)))),
    math.ExpM1Op: _unary(lambda g, op, d: mul(g, d, _add(g, _y(g, op), _c(g, 1.0, d)))),
    math.LogOp: _unary(lambda g, op, d: div(g, d, _x(g, op))),
    math.Log2Op: _unary(lambda g, op, d: div(g, d, mul(g, _x(g, op), _c(g, pymath.log(2.0), d)))),
    math.Log10Op: _unary(lambda g, op, d: div(g, d, mul(g, _x(g, op), _c(g, pymath.log(10.0), d)))),
    math.Log1pOp: _unary(lambda g, op, d: div(g, d, _add(g, _x(g, op), _c(g, 1.0, d)))),
    math.SqrtOp: _unary(lambda g, op, d: div(g, mul(g, d, _c(g, 0.5, d)), _y(g, op))),
    math.RsqrtOp: _unary(
        lambda g, op, d: mul(
            g,
            mul(g, d, _c(g, -0.5, d)),
            mul(g, _y(g, op), mul(g, _y(g, op), _y(g, op))),
        )
    ),
    math.SinOp: _unary(lambda g, op, d: mul(g, d, _ins(g, math.CosOp(_x(g, op))))),
    math.CosOp: _unary(lambda g, op, d: neg(g, mul(g, d, _ins(g, math.SinOp(_x(g, op)))))),
    math.SinhOp: _unary(lambda g, op, d: mul(g, d, _ins(g, math.CoshOp(_x(g, op))))),
    math.CoshOp: _unary(lambda g, op, d: mul(g, d, _ins(g, math.SinhOp(_x(g, op))))),
    math.TanhOp: _unary(
        lambda g, op, d: mul(
            g,
            d,
            _ins(g, arith.SubfOp(_c(g, 1.0, d), mul(g, _y(g, op), _y(g, op)))),
        )
    ),
    math.AtanOp: _unary(
        lambda g, op, d: div(g, d, _add(g, _c(g, 1.0, d), mul(g, _x(g, op), _x(g, op))))
    ),
    math.TanOp: _unary(
        lambda g, op, d: mul(g, d, _add(g, _c(g, 1.0, d), mul(g, _y(g, op), _y(g, op))))
    ),
    math.AsinOp: _unary(lambda g, op, d: div(g, d, _sqrt(g, _one_minus_x2(g, op, -1.0)))),
    math.AcosOp: _unary(lambda g, op, d: neg(g, div(g, d, _sqrt(g, _one_minus_x2(g, op, -1.0))))),
    math.AsinhOp: _unary(lambda g, op, d: div(g, d, _sqrt(g, _one_minus_x2(g, op, 1.0)))),
    math.AcoshOp: _unary(lambda g, op, d: div(g, d, _sqrt(g, _one_minus_x2(g, op, 0.0)))),
    math.AtanhOp: _unary(lambda g, op, d: div(g, d, _one_minus_x2(g, op, -1.0))),
    math.ErfOp: _unary(
        lambda g, op, d: mul(
            g,
            mul(g, d, _c(g, 2.0 / pymath.sqrt(pymath.pi), d)),
            _ins(g, math.ExpOp(neg(g, mul(g, _x(g, op), _x(g, op))))),
        )
    ),
    math.CbrtOp: _unary(
        lambda g, op, d: div(g, d, mul(g, _c(g, 3.0, d), mul(g, _y(g, op), _y(g, op))))
    ),
    math.Atan2Op: _atan2,
    math.CopySignOp: _copysign,
    math.AbsFOp: _unary(_absf),
    math.PowFOp: _powf,
    math.FPowIOp: _fpowi,
    math.FmaOp: _fma,
    math.FloorOp: _nothing,
    math.CeilOp: _nothing,
    math.RoundOp: _nothing,
    math.RoundEvenOp: _nothing,
    math.TruncOp: _nothing,
}
