"""`<math.h>` functions that no single `math` op is: `hypot`, `fmod`, `ldexp`, `frexp`,
each a composition of ops the semantics table and the AD rules already know, so every
executor computes the same bits and the adjoint follows from the rules of its parts.

- `hypot(x, y)`: `sqrt(x*x + y*y)` (libm's scaling is not reproduced: it overflows where
  `x*x` does, |x| > 1e154, and may differ from libm in the last bit).
- `fmod(x, y)`: `fma(-q, y, x)` with `q = trunc(x/y)`, corrected by one `y` where the
  rounded quotient crossed an integer: exact, as C's, for |x/y| < 2^53; d/dx = 1,
  d/dy = -q (trunc has no derivative).
- `ldexp(x, e)`: `x * 2^e1 * 2^e2`, the powers built from their bits (integers: no
  derivative), `e1` clamped to the normal exponents: one rounding, as C's, except a
  double rounding to a subnormal for e < -1022; d/dx = 2^e.
- `frexp(x, &e)`: the exponent from the bits of `x` (of `x * 2^54` for a subnormal), the
  mantissa `ldexp(x, -e)`, so d/dx = 2^-e; zero, infinities and NaN are themselves, e = 0.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float64Type, IndexType, f64, i64
from xdsl.ir import SSAValue

from .clang import decl_key, unsupported
from .function import FunctionState
from .types import scalar_type

COMPOSED = ("hypot", "fmod", "ldexp", "frexp")

_EXPONENT_MASK = 0x7FF
_BIAS = 1023
_SUBNORMAL_SCALE = 54  # 2^54 makes every subnormal double normal


class LibmCalls(FunctionState):
    """The composed `<math.h>` functions (COMPOSED), double and float variants."""

    def composed_call(self, name: str, e, args) -> SSAValue:
        ftype = scalar_type(e.type, e)
        if name in ("hypot", "fmod"):
            x, y = (self.convert(self.rvalue(a), e.type, a) for a in args)
            return self.hypot(x, y, e) if name == "hypot" else self.fmod(x, y, e)
        x = self.to_f64(self.convert(self.rvalue(args[0]), args[0].type, args[0]), e)
        if name == "ldexp":
            n = self.rvalue(args[1])
            if not isinstance(n.type, IndexType):
                unsupported(args[1], "ldexp's exponent of a non-integer type")
            r = self.ldexp(x, self.op(arith.IndexCastOp(n, i64), e), e)
        else:
            d = self.scalar_address(args[1])
            if d is None or not isinstance(scalar_type(d.type, args[1]), IndexType):
                unsupported(args[1], "frexp's exponent other than '&n' of a local integer 'n'")
            r, exp = self.frexp(x, e)
            self.vals[decl_key(d)] = self.op(arith.IndexCastOp(exp, scalar_type(d.type, d)), e)
        if ftype != f64:
            r = self.op(arith.TruncFOp(r, ftype), e)
        return r

    def to_f64(self, x: SSAValue, c) -> SSAValue:
        return x if isinstance(x.type, Float64Type) else self.op(arith.ExtFOp(x, f64), c)

    def op(self, op, c) -> SSAValue:
        """The result of `op`, emitted at `c`."""
        return self.emit(op, c).results[0]

    def hypot(self, x: SSAValue, y: SSAValue, c) -> SSAValue:
        xx = self.op(arith.MulfOp(x, x), c)
        yy = self.op(arith.MulfOp(y, y), c)
        return self.op(math.SqrtOp(self.op(arith.AddfOp(xx, yy), c)), c)

    def fmod(self, x: SSAValue, y: SSAValue, c) -> SSAValue:
        t = x.type
        zero = self.const(0.0, t, c)
        q = self.op(math.TruncOp(self.op(arith.DivfOp(x, y), c)), c)
        r = self.op(math.FmaOp(self.op(arith.NegfOp(q), c), y, x), c)
        # x/y rounded up to the integer q: r is one y past the remainder, of the other sign
        crossed = self.op(arith.CmpfOp(self.op(arith.MulfOp(r, x), c), zero, "olt"), c)
        back = self.op(arith.AddfOp(r, self.op(math.CopySignOp(y, x), c)), c)
        r = self.op(arith.SelectOp(crossed, back, r), c)
        # C's zero remainder has the sign of x; x finite and y infinite: x itself
        signed_zero = self.op(arith.MulfOp(x, zero), c)
        is_zero = self.op(arith.CmpfOp(r, zero, "oeq"), c)
        r = self.op(arith.SelectOp(is_zero, signed_zero, r), c)
        inf = self.const(float("inf"), t, c)
        y_inf = self.op(arith.CmpfOp(self.op(math.AbsFOp(y), c), inf, "oeq"), c)
        x_finite = self.op(arith.CmpfOp(self.op(math.AbsFOp(x), c), inf, "olt"), c)
        keep_x = self.op(arith.AndIOp(y_inf, x_finite), c)
        return self.op(arith.SelectOp(keep_x, x, r), c)

    def power_of_two(self, n: SSAValue, c) -> SSAValue:
        """2^n for n in [-1022, 1023] (an i64), from its bits."""
        biased = self.op(arith.AddiOp(n, self.const(_BIAS, i64, c)), c)
        bits = self.op(arith.ShLIOp(biased, self.const(52, i64, c)), c)
        return self.op(arith.BitcastOp(bits, f64), c)

    def ldexp(self, x: SSAValue, n: SSAValue, c) -> SSAValue:
        low, high = self.const(1 - _BIAS, i64, c), self.const(_BIAS, i64, c)
        n1 = self.op(arith.MinSIOp(self.op(arith.MaxSIOp(n, low), c), high), c)
        n2 = self.op(arith.SubiOp(n, n1), c)
        n2 = self.op(arith.MinSIOp(self.op(arith.MaxSIOp(n2, low), c), high), c)
        once = self.op(arith.MulfOp(x, self.power_of_two(n1, c)), c)
        return self.op(arith.MulfOp(once, self.power_of_two(n2, c)), c)

    def biased_exponent(self, x: SSAValue, c) -> SSAValue:
        bits = self.op(arith.BitcastOp(x, i64), c)
        shifted = self.op(arith.ShRUIOp(bits, self.const(52, i64, c)), c)
        return self.op(arith.AndIOp(shifted, self.const(_EXPONENT_MASK, i64, c)), c)

    def frexp(self, x: SSAValue, c) -> tuple[SSAValue, SSAValue]:
        """(mantissa in [0.5, 1), exponent as an i64) of the double `x`."""
        zero_i = self.const(0, i64, c)
        biased = self.biased_exponent(x, c)
        subnormal = self.op(arith.CmpiOp(biased, zero_i, "eq"), c)
        scale = self.op(arith.SelectOp(
            subnormal, self.const(2.0**_SUBNORMAL_SCALE, f64, c), self.const(1.0, f64, c)), c)
        xs = self.op(arith.MulfOp(x, scale), c)
        e = self.op(arith.SubiOp(self.biased_exponent(xs, c), self.const(_BIAS - 1, i64, c)), c)
        m = self.ldexp(xs, self.op(arith.SubiOp(zero_i, e), c), c)
        shift = self.op(arith.SelectOp(subnormal, self.const(_SUBNORMAL_SCALE, i64, c), zero_i), c)
        e = self.op(arith.SubiOp(e, shift), c)
        is_zero = self.op(arith.CmpfOp(x, self.const(0.0, f64, c), "oeq"), c)
        not_finite = self.op(arith.CmpiOp(biased, self.const(_EXPONENT_MASK, i64, c), "eq"), c)
        special = self.op(arith.OrIOp(is_zero, not_finite), c)
        mantissa = self.op(arith.SelectOp(special, x, m), c)
        return mantissa, self.op(arith.SelectOp(special, zero_i, e), c)
