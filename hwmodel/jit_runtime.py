"""The functions numba-compiled loop kernels call (`tapeflow.hwmodel.jit`), compiled once
per machine (numba's on-disk cache) and shared by every kernel.

- `_divf`, `_maximumf`, `_minimumf`, `_f32`, `_wrap`, `_index_cast`, `_m_log`: numba
  ports of the helpers the generated code calls (hwmodel/compiled.py `_int_helpers`,
  `_math_helpers`, after tapeflow.interpreters.extra_ops; those hold Python-only code);
  `_maxnum`, `_minnum`: the interpreter's own functions, compiled. test/python/test_jit.py
  compares each with the generated code's on special values, bit for bit.
- `_grow` ... `_wbulk`: `compiled.Trace`'s counter and phase-window logic (`window_start`,
  `window_bulk`, `window_end`) on a kernel's local state.

Without numba the module still imports (plain Python functions), so the kernel
translator can be tested anywhere.
"""

import math
import struct

import numpy as np

from tapeflow.interpreters import extra_ops as _extra_ops

try:
    from numba import njit as _njit
except ImportError:  # pragma: no cover - numba is the optional extra `fast`

    def _njit(**_: object):  # type: ignore[no-untyped-def]
        return lambda f: f


_INF = math.inf
_NAN = math.nan
_NEG_NAN = struct.unpack("<d", bytes.fromhex("000000000000f8ff"))[0]
"""What the generated code's `_m_log` (NumPy's log) gives below zero; numba's is +nan."""
_NONE = -9223372036854775807 - 1
"""`None` of a phase-end induction value (no iteration has it)."""


@_njit(cache=True)
def _divf(x, y):
    if y != 0.0:
        return x / y
    if x == 0.0 or math.isnan(x):
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


_maxnum = _njit(cache=True)(_extra_ops._maxnum)  # pyright: ignore[reportPrivateUsage]
_minnum = _njit(cache=True)(_extra_ops._minnum)  # pyright: ignore[reportPrivateUsage]
"""The interpreter's own maxnum/minnum (plain enough for numba as they are)."""


@_njit(cache=True)
def _maximumf(a, b):
    if a != a or b != b:
        return math.nan
    if a == 0.0 and b == 0.0:
        if math.copysign(1.0, a) > 0 or math.copysign(1.0, b) > 0:
            return 0.0
        return -0.0
    return max(a, b)


@_njit(cache=True)
def _minimumf(a, b):
    if a != a or b != b:
        return math.nan
    if a == 0.0 and b == 0.0:
        if math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0:
            return -0.0
        return 0.0
    return min(a, b)


@_njit(cache=True)
def _f32(x):
    return np.float64(np.float32(x))


@_njit(cache=True)
def _wrap(v, bw):
    if bw >= 64:
        return v
    t = v & ((1 << bw) - 1)
    if t >= (1 << (bw - 1)):
        t -= 1 << bw
    return t


@_njit(cache=True)
def _grow(a, p):
    b = np.empty((2 * a.shape[0],) + a.shape[1:], a.dtype)
    b[:p] = a[:p]
    return b


@_njit(cache=True)
def _record(pe, pebc, n, p, bc, k, rest):
    if n == pe.shape[0]:
        pe = _grow(pe, n)
        pebc = _grow(pebc, n)
    pe[n] = p
    pebc[n, :] = bc
    if k >= 0:
        pebc[n, k] -= rest
    return n + 1, pe, pebc


@_njit(cache=True)
def _wstart(wn, win, c, n, r0, r2):
    w0 = wn[0] - n * c - wn[1]
    j = max(1, -(-(win - w0) // c))
    return r0 + (j - 1) * r2


@_njit(cache=True)
def _wbulk(wn, win, c, n, r0, r2, iv, k, bc, p, pe, pebc, npe):
    j = (iv - r0) // r2 + 1
    rest = n - j
    npe, pe, pebc = _record(pe, pebc, npe, p, bc, k, rest)
    wn[1] = wn[0] - rest * c
    j += -(-win // c)
    return (r0 + (j - 1) * r2 if j <= n else _NONE), npe, pe, pebc


@_njit(cache=True)
def _m_log(x):
    if x < 0.0:
        return _NEG_NAN
    return math.log(x)


@_njit(cache=True)
def _index_cast(v, in_bw, out_bw):
    if in_bw > out_bw:
        t = v & ((1 << out_bw) - 1)
        if t & (1 << (out_bw - 1)):
            t -= 1 << out_bw
        return t
    if in_bw < out_bw:
        sign_bit = 1 << (in_bw - 1)
        return (v & (sign_bit - 1)) - (v & sign_bit)
    return _wrap(v, out_bw)
