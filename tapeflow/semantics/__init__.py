"""One home for the semantics and cost class of every scalar op (arith, math).

`SCALARS[name]` is a `Scalar`: its bit-exact Python function on the interpreter's values
(the reference every path uses), how the interpreter calls it (`kind`), an optional inline
expression for the fast path's generated code, the message of the error it raises
(`guard`, raised as `Guard`) and the op class the hardware model charges it as (`cost`).
From this table:

- the interpreter functions (`tapeflow.interpreters.extra_ops` registers one
  `InterpreterFunctions` per dialect built from every entry with a function);
- the fast path's scalar emitters (`hwmodel/compiled/scalars.py`: `_scalar` for the float
  entries with an `inline` expression, `_typed` for the `typed` entries' `inline_for`
  (casts) behind their `check`, `_int_div` for the integer divisions' `inline` and
  `inline64`; the generated code calls `HELPERS`; any other entry runs its function);
- the numba runtime of loop kernels (`hwmodel/jit_runtime.py`: `njit` of `JIT_FORMS`,
  each the reference function itself or its `jit` form where the reference is
  CPython-only code (ctypes, exceptions from `math`)), and `jit.MATH` (`JIT_CALLS`: the
  libm helpers a kernel calls as numba's `math`);
- the cost model's classification (`hwmodel/costs.py` `classify`, which `fastsim` and the
  listener share).

Value conventions are the interpreter's (xDSL's): floats are Python floats holding a value
of the op's type; integers are Python ints in the signed canonical range of their width;
integer ops wrap. Floats follow IEEE semantics: where CPython's `math` raises (domain
error, overflow, pole) the result is NumPy's IEEE one (inf).

NaNs, one rule in every executor on every x86-64: an op whose operands are not NaN and
whose result is (a libm call outside its domain, 0/0, inf - inf, 0 * inf) gives `NAN`; a
NaN operand propagates (quieted, as the x86-64 instruction would; which of two NaN
operands is left to each executor, as IEEE 754 leaves it: CPython's float + and * give the
second, the specialised bytecode a hot loop of generated code switches to and numba the
first, so the tests compare NaN-ness there; `maximumf`, `minimumf` give +nan). CPython's float +, -, *, /
use SSE, whose invalid result is `NAN` on every x86-64; libm and NumPy agree on no NaN
(glibc's log(-1) is +nan, NumPy's depends on its SIMD path), so each call to them that
may make a NaN goes through `libm` (the reference) or a `jit` form (numba) that gives
`NAN`; natively, `tapeflow.native` selects `NAN` after each math op.
"""

from __future__ import annotations

import ctypes
import math as pymath
import operator
import struct
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute
from xdsl.utils.comparisons import to_signed, to_unsigned


class Guard(Exception):
    """A scalar op's operands are outside its domain (the message is the op's error)."""


@dataclass(frozen=True)
class Scalar:
    name: str
    """The op name (`arith.divsi`)."""
    cost: str | None
    """Its op class (a key of `[ops.*]`); None: unclassified (charged as `int`, listed)."""
    fn: Callable[..., Any] | None = None
    """The reference function; None: xDSL's implementation where it has one (the ops with
    an inline form in every path: integer add/sub/mul/bitwise/shift ops, comparisons,
    select). `arith.remf` and `arith.index_castui` have none in xDSL 0.74: their entries
    give only the cost class."""
    kind: str = ""
    """How `fn` is called: `float` (float operands; the result is rounded to the result
    type), `exact` (float operands; the result is one of them or exactly representable:
    no rounding), `int` (operands then the result's bit width; the result wraps),
    `multi` (as `int`, returning a tuple: one value per result), `typed` (the operands,
    then the `Ty` of each operand and each result: casts, fpowi)."""
    inline: str | None = None
    """The generated code's expression (`{0}`, `{1}`: operands; `{w}`: bit width) for
    f64/f32 (`float`), any float type (`exact`), any width (`int`). None: no inline form."""
    guard: str | None = None
    """The message `fn` raises (as `Guard`) outside its domain (a template where it names
    the value or a type)."""
    inline_for: Callable[..., str | None] | None = None
    """`typed` entries: the generated code's expression for these `Ty`s (operands, then
    results), or None where the op runs the interpreter's implementation (`fn`)."""
    check: Callable[..., str] | None = None
    """`typed` entries with `inline_for`: the condition (on `{0}`...) under which the
    inline form is `fn`'s value; where it fails the generated code runs `fn` (the error)."""
    inline64: tuple[str, ...] = ()
    """Statements computing a 64-bit result in the generated code without a call
    (`{r}`: the result, `{d}`: a temporary, `{0}`, `{1}`: operands)."""
    helper: str | None = None
    """The name the generated code (and numba kernels) call `fn` by."""
    jit: Callable[..., Any] | None = None
    """What numba kernels compile for `helper` (`JIT_FORMS`): `fn` itself where numba takes
    it, else a function giving the same bits; None: kernels do not call it."""
    jit_call: str | None = None
    """What a numba kernel calls instead of `helper` (`math.exp`: the same libm)."""


# ---------------------------------------------------------------------------------------
# Float rounding and IEEE-safe libm calls.


def f32(x: float) -> float:
    """`x` rounded to f32 (the C cast: nearest even, +-inf on overflow; numpy would warn)."""
    return ctypes.c_float(x).value


def _f32_jit(x: float) -> float:
    return np.float64(np.float32(x))


def f16(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float16(x))


def bf16(x: float) -> float:
    if pymath.isnan(x):
        return x
    bits = struct.unpack("<I", struct.pack("<f", f32(x)))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    return struct.unpack("<f", struct.pack("<I", bits))[0]


NAN = struct.unpack("<d", bytes.fromhex("000000000000f8ff"))[0]
"""The one NaN an invalid operation gives (0xfff8000000000000: x86's default NaN, what
its SSE arithmetic gives for inf - inf or sqrt(-1)). NumPy's libm does not: which SIMD
path it takes depends on the CPU, and log(-1.0) is -nan on one x86-64 and +nan on another."""


def libm(fn: Callable[..., float], npname: str, *xs: float) -> float:
    """`fn(*xs)` from Python's math; where it raises (domain error, overflow, pole),
    NumPy's (`np.<npname>`) IEEE result (inf) instead, and `NAN` for any NaN (CPython's
    `math` raises for every NaN of non-NaN arguments)."""
    try:
        return float(fn(*xs))
    except (ValueError, OverflowError, ZeroDivisionError):
        with np.errstate(all="ignore"):
            r = float(getattr(np, npname)(*(np.float64(x) for x in xs)))
        return NAN if r != r else r


def _libm1(name: str, npname: str | None = None) -> Callable[[float], float]:
    fn, npname = getattr(pymath, name), npname or name
    return lambda x: libm(fn, npname, x)


def _libm2(name: str, npname: str | None = None) -> Callable[[float, float], float]:
    fn, npname = getattr(pymath, name), npname or name
    return lambda x, y: libm(fn, npname, x, y)


# numba's math.* call the platform's libm, which does not return `NAN` (glibc's log(-1)
# is +nan): the kernels call these instead, `NAN` exactly where the libm call makes a NaN.


def _log_jit(x: float) -> float:
    return NAN if x < 0.0 else pymath.log(x)


def _sqrt_jit(x: float) -> float:
    return NAN if x < 0.0 else pymath.sqrt(x)


def _sin_jit(x: float) -> float:
    return NAN if pymath.isinf(x) else pymath.sin(x)


def _cos_jit(x: float) -> float:
    return NAN if pymath.isinf(x) else pymath.cos(x)


def divf(x: float, y: float) -> float:
    """x / y with IEEE results for a zero divisor (Python raises): a NaN dividend
    propagates (quieted, as SSE's division would), 0/0 is `NAN`."""
    if y != 0.0:
        return x / y
    if x != x:
        return x + y
    if x == 0.0:
        return NAN
    return pymath.copysign(pymath.inf, x) * pymath.copysign(1.0, y)


def _rsqrt(x: float) -> float:
    return divf(1.0, libm(pymath.sqrt, "sqrt", x))


def _round_half_away(x: float) -> float:
    if not pymath.isfinite(x):
        return x
    t = float(np.trunc(x))
    if abs(x - t) >= 0.5:
        t += pymath.copysign(1.0, x)
    return pymath.copysign(t, x)


def fma(a: float, b: float, c: float) -> float:
    """a*b+c with a single rounding (to f64)."""
    if not (pymath.isfinite(a) and pymath.isfinite(b)):
        return a * b + c  # an infinite or NaN product: rounding it changes nothing
    if not pymath.isfinite(c):
        return c + 0.0  # the exact product is finite (1e308 * -3.7 + inf is inf, not NaN)
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:  # IEEE: the sign of an exact zero sum follows the usual rules
        return a * b + c
    try:
        return float(exact)
    except OverflowError:  # (copysign would convert `exact` to a float too)
        return pymath.inf if exact > 0 else -pymath.inf


def fpowi(x: float, n: int) -> float:
    return libm(pymath.pow, "power", x, float(n))


def _exact(npfn: Callable[[Any], Any]) -> Callable[[float], float]:
    """NumPy's rounding `npfn`; an infinity is itself and a NaN propagates (quieted, as
    the rounding instruction would), not NumPy's SIMD path's NaN."""
    return lambda x: float(npfn(np.float64(x))) if pymath.isfinite(x) else x + 0.0


def maxnum(x: float, y: float) -> float:
    if pymath.isnan(x):
        return y
    if pymath.isnan(y):
        return x
    if x == 0 and y == 0:
        return 0.0 if (pymath.copysign(1, x) > 0 or pymath.copysign(1, y) > 0) else -0.0
    return max(x, y)


def minnum(x: float, y: float) -> float:
    if pymath.isnan(x):
        return y
    if pymath.isnan(y):
        return x
    if x == 0 and y == 0:
        return -0.0 if (pymath.copysign(1, x) < 0 or pymath.copysign(1, y) < 0) else 0.0
    return min(x, y)


def maximumf(a: float, b: float) -> float:
    """NaN if either is NaN; +0 above -0."""
    if a != a or b != b:
        return pymath.nan
    if a == 0.0 and b == 0.0:
        if pymath.copysign(1.0, a) > 0 or pymath.copysign(1.0, b) > 0:
            return 0.0
        return -0.0
    return max(a, b)


def minimumf(a: float, b: float) -> float:
    """NaN if either is NaN; -0 below +0."""
    if a != a or b != b:
        return pymath.nan
    if a == 0.0 and b == 0.0:
        if pymath.copysign(1.0, a) < 0 or pymath.copysign(1.0, b) < 0:
            return -0.0
        return 0.0
    return min(a, b)


# ---------------------------------------------------------------------------------------
# Integers: operands are read at the result's width `w`; results wrap to it.


def wrap(x: int, w: int) -> int:
    """`x` wrapped to `w` bits, signed canonical form."""
    return to_signed(int(x) & ((1 << w) - 1), w)


def unsigned(x: int, w: int) -> int:
    return to_unsigned(int(x) & ((1 << w) - 1), w)


def _wrap_jit(v: int, w: int) -> int:
    if w >= 64:  # numba's int64 arithmetic has wrapped already
        return v
    t = v & ((1 << w) - 1)
    if t >= (1 << (w - 1)):
        t -= 1 << w
    return t


_DIV0 = "integer division by zero"


def _quotient(a: int, b: int, w: int) -> tuple[int, int, int]:
    """The operands read as signed and their quotient rounded toward zero (not wrapped)."""
    a, b = to_signed(a, w), to_signed(b, w)
    if b == 0:
        raise Guard(_DIV0)
    d = abs(a) // abs(b)
    if (a > 0) != (b > 0):
        d = -d
    return a, b, d


def divsi(a: int, b: int, w: int) -> int:
    """Signed division rounding toward zero; INT_MIN / -1 wraps."""
    return to_signed(_quotient(a, b, w)[2], w)


def remsi(a: int, b: int, w: int) -> int:
    """The remainder of `divsi` (the sign of the dividend)."""
    a, b, d = _quotient(a, b, w)
    return a - d * b


def floordivsi(a: int, b: int, w: int) -> int:
    a, b = to_signed(a, w), to_signed(b, w)
    if b == 0:
        raise Guard(_DIV0)
    return to_signed(a // b, w)


def _unsigned_div(fn: Callable[[int, int], int]) -> Callable[[int, int, int], int]:
    def run(a: int, b: int, w: int) -> int:
        a, b = unsigned(a, w), unsigned(b, w)
        if b == 0:
            raise Guard(_DIV0)
        return wrap(fn(a, b), w)

    return run


def ceildivsi(a: int, b: int, w: int) -> int:
    a, b = wrap(a, w), wrap(b, w)
    if b == 0:
        raise Guard(_DIV0)
    return wrap(-((-a) // b), w)


def _signed(fn: Callable[[int, int], int]) -> Callable[[int, int, int], int]:
    return lambda a, b, w: wrap(fn(wrap(a, w), wrap(b, w)), w)


def _unsigned(fn: Callable[[int, int, int], int]) -> Callable[[int, int, int], int]:
    return lambda a, b, w: wrap(fn(unsigned(a, w), unsigned(b, w), w), w)


def cmpu(a: int, b: int, w: int) -> tuple[int, int]:
    """Both operands read as unsigned (cmpi's u* predicates)."""
    return to_unsigned(a, w), to_unsigned(b, w)


def _index_cast_jit(v: int, in_w: int, out_w: int) -> int:
    """`index_cast` for numba (int64 values: an equal width changes nothing)."""
    if in_w > out_w:
        t = v & ((1 << out_w) - 1)
        if t & (1 << (out_w - 1)):
            t -= 1 << out_w
        return t
    if in_w < out_w:
        sign_bit = 1 << (in_w - 1)
        return (v & (sign_bit - 1)) - (v & sign_bit)
    if out_w >= 64:
        return v
    t = v & ((1 << out_w) - 1)
    return t - (1 << out_w) if t >= (1 << (out_w - 1)) else t


def index_cast(v: int, in_w: int, out_w: int) -> int:
    """Truncates to a narrower width, sign-extends to a wider one (xDSL's rule)."""
    return to_signed(v, out_w) if in_w == out_w else _index_cast_jit(v, in_w, out_w)


# ---------------------------------------------------------------------------------------
# Ops whose value depends on the operand and result types: they take each one's `Ty`.


@dataclass(frozen=True)
class Ty:
    """A scalar type as the `typed` functions see it."""

    name: str
    """As printed (`i32`, `index`, `f32`): what messages name."""
    width: int
    """Bit width (index: the interpreter's index width)."""
    kind: str
    """`int` (an `IntegerType`), `index` or `float`."""


def scalar_type(t: Attribute, index_bitwidth: int) -> Ty | None:
    """`t` as a `Ty`; None if it is not an integer, index or float type."""
    if isinstance(t, IntegerType):
        return Ty(str(t), t.width.data, "int")
    if isinstance(t, IndexType):
        return Ty("index", index_bitwidth, "index")
    if isinstance(t, AnyFloat):
        return Ty(str(t), t.bitwidth, "float")
    return None


ROUNDERS: dict[type, Callable[[float], float]] = {
    Float32Type: f32, Float16Type: f16, BFloat16Type: bf16}
"""The float types narrower than f64, by xDSL type class, and the function rounding to each."""

_ROUND_TO = {str(cls()): rnd for cls, rnd in ROUNDERS.items()}  # by name: `Ty.name`


def round_to(t: Ty, x: float) -> float:
    """`x` rounded to the float type `t` (f64 and wider: as it is)."""
    rnd = _ROUND_TO.get(t.name)
    return float(x) if rnd is None else rnd(x)


def _int_to_float(v: int, dst: Ty) -> float:
    if dst.name == "f32":  # round the integer once, straight to f32 (not via f64)
        return float(np.float32(v)) if abs(v) < (1 << 63) else f32(float(v))
    try:
        return round_to(dst, float(v))
    except OverflowError:
        return pymath.copysign(pymath.inf, v)


def _toward_zero(x: float) -> int:
    if not pymath.isfinite(x):
        raise Guard(f"cannot convert {x!r} to an integer")
    return int(x)


_FITS = "{x!r} does not fit in {dst}"
_FITS_UNSIGNED = "{x!r} does not fit in unsigned {dst}"


def fptosi(x: float, src: Ty, dst: Ty) -> int:
    v, w = _toward_zero(x), dst.width
    if not -(1 << (w - 1)) <= v < (1 << (w - 1)):
        raise Guard(_FITS.format(x=x, dst=dst.name))
    return v


def fptoui(x: float, src: Ty, dst: Ty) -> int:
    v, w = _toward_zero(x), dst.width
    if not 0 <= v < (1 << w):
        raise Guard(_FITS_UNSIGNED.format(x=x, dst=dst.name))
    return wrap(v, w)


def _fptosi_check(src: Ty, dst: Ty) -> str:
    """`fptosi`'s range test on an f64 (`{0}`) as a literal comparison."""
    w = dst.width
    low = f"{-(2.0 ** 63)!r} <= {{0}}" if w == 64 else f"{float(-(1 << (w - 1)) - 1)!r} < {{0}}"
    return f"{low} < {2.0 ** (w - 1)!r}"


_BIT_FORMATS = {"f64": "<d", "f32": "<f", "f16": "<e"}
_INT_FORMATS = {8: "<b", 16: "<h", 32: "<i", 64: "<q"}


def _bit_format(t: Ty) -> str | None:
    return _INT_FORMATS.get(t.width) if t.kind == "int" else _BIT_FORMATS.get(t.name)


_BITCAST = "bitcast from {src} to {dst} is not supported"


def bitcast(x: Any, src: Ty, dst: Ty) -> Any:
    fmt_src, fmt_dst = _bit_format(src), _bit_format(dst)
    if fmt_src is None or fmt_dst is None:
        raise Guard(_BITCAST.format(src=src.name, dst=dst.name))
    if src.kind == "int":
        x = wrap(x, src.width)
    elif src.name == "f32":
        x = f32(x)  # struct refuses out-of-range values; ours are f32 already
    out = struct.unpack(fmt_dst, struct.pack(fmt_src, x))[0]
    return float(out) if isinstance(out, float) else int(out)


def _fpowi_typed(x: float, n: int, tx: Ty, tn: Ty, tr: Ty) -> float:
    return round_to(tr, fpowi(x, wrap(n, tn.width)))


def _index_cast_inline(src: Ty, dst: Ty) -> str:
    if src.width == dst.width == 64:
        return "{0}"
    return f"_index_cast({{0}}, {src.width}, {dst.width})"


_ZERO_POW = "zero raised to a negative power"


def ipowi(base: int, exp_: int, w: int) -> int:
    base, exp_ = wrap(base, w), wrap(exp_, w)
    if exp_ >= 0:
        return wrap(pow(base, exp_, 1 << w), w)
    if base == 0:
        raise Guard(_ZERO_POW)
    if base == 1:
        return 1
    if base == -1:
        return 1 if exp_ % 2 == 0 else wrap(-1, w)
    return 0


def cttz(a: int, w: int) -> int:
    v = unsigned(a, w)
    return w if v == 0 else (v & -v).bit_length() - 1


def addui_extended(a: int, b: int, w: int) -> tuple[int, bool]:
    total = unsigned(a, w) + unsigned(b, w)
    return wrap(total, w), total >= (1 << w)


def _mul_extended(read: Callable[[int, int], int]) -> Callable[[int, int, int], tuple[int, int]]:
    def run(a: int, b: int, w: int) -> tuple[int, int]:
        full = read(a, w) * read(b, w)
        return wrap(full, w), wrap(full >> w, w)

    return run


# ---------------------------------------------------------------------------------------
# The table.

_F, _E, _I, _T = "float", "exact", "int", "typed"


def _s(name: str, cost: str | None, fn: Any = None, kind: str = "", **kw: Any) -> Scalar:
    return Scalar(name, cost, fn, kind, **kw)


_ENTRIES = [
    # arith: floats
    _s("arith.addf", "fp_add", operator.add, _F, inline="{0} + {1}"),
    _s("arith.subf", "fp_add", operator.sub, _F, inline="{0} - {1}"),
    _s("arith.mulf", "fp_mul", operator.mul, _F, inline="{0} * {1}"),
    _s("arith.divf", "fp_div", divf, _F, inline="({0} / {1} if {1} else _divf({0}, {1}))",
       helper="_divf", jit=divf),
    _s("arith.remf", "fp_div"),  # not registered in xDSL 0.74: no program has it
    _s("arith.negf", "fp_add", operator.neg, _E, inline="-{0}"),
    _s("arith.maxnumf", "fp_add", maxnum, _F, inline="_maxnum({0}, {1})", helper="_maxnum",
       jit=maxnum),
    _s("arith.minnumf", "fp_add", minnum, _F, inline="_minnum({0}, {1})", helper="_minnum",
       jit=minnum),
    _s("arith.maximumf", "fp_add", maximumf, _E, inline="_maximumf({0}, {1})",
       helper="_maximumf", jit=maximumf),
    _s("arith.minimumf", "fp_add", minimumf, _E, inline="_minimumf({0}, {1})",
       helper="_minimumf", jit=minimumf),
    _s("arith.cmpf", "fp_add"),
    # arith: integers (`int` ops' 64-bit forms are emitted with range analysis, compiled/scalars.py)
    _s("arith.addi", "int"),
    _s("arith.subi", "int"),
    _s("arith.muli", "int_mul"),
    _s("arith.andi", "int"),
    _s("arith.ori", "int"),
    _s("arith.xori", "int"),
    _s("arith.shli", "int"),
    _s("arith.shrsi", "int"),
    _s("arith.shrui", "int", _unsigned(lambda a, b, w: a >> b if b < w else 0), _I),
    _s("arith.cmpi", "int"),
    _s("arith.select", "int"),
    _s("arith.maxsi", "int", _signed(max), _I),
    _s("arith.minsi", "int", _signed(min), _I),
    _s("arith.maxui", "int", _unsigned(lambda a, b, w: max(a, b)), _I),
    _s("arith.minui", "int", _unsigned(lambda a, b, w: min(a, b)), _I),
    _s("arith.divsi", "int_div", divsi, _I, inline="_divsi({0}, {1}, {w})", guard=_DIV0,
       helper="_divsi", inline64=(
           "{r} = abs({0}) // abs({1})", "if ({0} > 0) != ({1} > 0): {r} = -{r}",
           f"if {{r}} == {1 << 63}: {{r}} = {-(1 << 63)}")),  # INT64_MIN / -1 wraps
    _s("arith.remsi", "int_div", remsi, _I, inline="_remsi({0}, {1}, {w})", guard=_DIV0,
       helper="_remsi", inline64=(
           "{d} = abs({0}) // abs({1})", "if ({0} > 0) != ({1} > 0): {d} = -{d}",
           "{r} = {0} - {d} * {1}")),
    _s("arith.floordivsi", "int_div", floordivsi, _I, inline="_floordivsi({0}, {1}, {w})",
       guard=_DIV0, helper="_floordivsi"),
    _s("arith.divui", "int_div", _unsigned_div(operator.floordiv), _I, guard=_DIV0),
    _s("arith.remui", "int_div", _unsigned_div(operator.mod), _I, guard=_DIV0),
    _s("arith.ceildivsi", "int_div", ceildivsi, _I, guard=_DIV0),
    _s("arith.ceildivui", "int_div", _unsigned_div(lambda a, b: -((-a) // b)), _I, guard=_DIV0),
    _s("arith.index_cast", "int", lambda v, s, d: index_cast(v, s.width, d.width), _T,
       inline_for=_index_cast_inline),
    _s("arith.index_castui", "int"),
    _s("arith.extsi", "int", lambda v, s, d: wrap(v, s.width), _T),
    _s("arith.extui", "int", lambda v, s, d: wrap(unsigned(v, s.width), d.width), _T),
    _s("arith.trunci", "int", lambda v, s, d: wrap(v, d.width), _T),
    # arith: conversions
    _s("arith.sitofp", "cvt", lambda v, s, d: _int_to_float(wrap(v, s.width), d), _T,
       inline_for=lambda s, d: "float({0})" if s.width == 64 and d.name == "f64" else None),
    _s("arith.uitofp", "cvt", lambda v, s, d: _int_to_float(unsigned(v, s.width), d), _T),
    _s("arith.fptosi", "cvt", fptosi, _T, guard=_FITS,
       inline_for=lambda s, d: "int({0})" if s.name == "f64" and d.width <= 64 else None,
       check=_fptosi_check),
    _s("arith.fptoui", "cvt", fptoui, _T, guard=_FITS_UNSIGNED),
    _s("arith.extf", "cvt", lambda x, s, d: float(x), _T, inline_for=lambda s, d: "float({0})"),
    _s("arith.truncf", "cvt", lambda x, s, d: round_to(d, x), _T),
    _s("arith.bitcast", "cvt", bitcast, _T, guard=_BITCAST),
    # arith: not classified by the cost model (charged as int, listed in the report)
    _s("arith.addui_extended", None, addui_extended, "multi"),
    _s("arith.mului_extended", None, _mul_extended(unsigned), "multi"),
    _s("arith.mulsi_extended", None, _mul_extended(wrap), "multi"),
    # math: libm
    *(_s(f"math.{n}", "fp_special", _libm1(n), _F, inline=f"_m_{n}({{0}})", helper=f"_m_{n}",
         jit_call=f"math.{n}") for n in ("tanh", "exp")),  # never a NaN of a non-NaN
    *(_s(f"math.{n}", "fp_special", _libm1(n), _F, inline=f"_m_{n}({{0}})", helper=f"_m_{n}",
         jit=jit, jit_call=f"_m_{n}") for n, jit in (
        ("sin", _sin_jit), ("cos", _cos_jit), ("log", _log_jit))),
    _s("math.sqrt", "fp_div", _libm1("sqrt"), _F, inline="_m_sqrt({0})", helper="_m_sqrt",
       jit=_sqrt_jit, jit_call="_m_sqrt"),
    *(_s(f"math.{n}", "fp_special", _libm1(n, npn), _F) for n, npn in (
        ("tan", None), ("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
        ("sinh", None), ("cosh", None), ("asinh", "arcsinh"), ("acosh", "arccosh"),
        ("atanh", "arctanh"), ("exp2", None), ("expm1", None), ("log2", None),
        ("log10", None), ("log1p", None), ("cbrt", None))),
    _s("math.erf", "fp_special", pymath.erf, _F),
    _s("math.rsqrt", "fp_special", _rsqrt, _F),
    _s("math.absf", "fp_add", abs, _F, inline="abs({0})"),
    _s("math.copysign", "fp_add", pymath.copysign, _F),
    _s("math.floor", "fp_special", _exact(np.floor), _F),
    _s("math.ceil", "fp_special", _exact(np.ceil), _F),
    _s("math.trunc", "fp_special", _exact(np.trunc), _F),
    _s("math.roundeven", "fp_special", _exact(np.rint), _F),
    _s("math.round", "fp_special", _round_half_away, _F),
    _s("math.powf", "fp_special", _libm2("pow", "power"), _F),
    _s("math.atan2", "fp_special", _libm2("atan2", "arctan2"), _F),
    _s("math.fpowi", "fp_special", _fpowi_typed, _T),
    _s("math.fma", "fp_fma", fma, _F),
    _s("math.absi", "int", lambda a, w: wrap(abs(wrap(a, w)), w), _I),
    _s("math.ctlz", "int", lambda a, w: w - unsigned(a, w).bit_length(), _I),
    _s("math.cttz", "int", cttz, _I),
    _s("math.ctpop", "int", lambda a, w: unsigned(a, w).bit_count(), _I),
    _s("math.ipowi", "fp_special", ipowi, _I, guard=_ZERO_POW),
]  # fmt: skip

SCALARS: dict[str, Scalar] = {e.name: e for e in _ENTRIES}

HELPERS: dict[str, Callable[..., Any]] = {
    e.helper: e.fn for e in _ENTRIES if e.helper and e.fn is not None
}
"""What the generated code calls, by name (the reference functions themselves)."""
HELPERS.update(_f32=f32, _wrap=to_signed, _cmpu=cmpu, _index_cast=index_cast)

JIT_FORMS: dict[str, Callable[..., Any]] = {
    e.helper: e.jit for e in _ENTRIES if e.helper and e.jit is not None
}
"""The helpers numba kernels may call -> the function `jit_runtime` compiles (the
reference itself where numba takes it as it is)."""
JIT_FORMS.update(_f32=_f32_jit, _wrap=_wrap_jit, _index_cast=_index_cast_jit)

JIT_CALLS: dict[str, str] = {e.helper: e.jit_call for e in _ENTRIES if e.helper and e.jit_call}
"""libm helpers -> what a numba kernel calls (numba calls the same libm, and returns the
IEEE results where CPython's `math` raises and the reference asks NumPy)."""


def cost_class(name: str) -> str | None:
    """The op class of scalar op `name`; "" for an entry without one (charged as `int`
    and listed); None if the table does not know it (any other `math` op is a special
    function: `fp_special`)."""
    e = SCALARS.get(name)
    if e is not None:
        return e.cost if e.cost is not None else ""
    if name.startswith("math."):
        return "fp_special"
    return None
