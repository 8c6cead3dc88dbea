"""The functions numba-compiled loop kernels call (`tapeflow.hwmodel.jit`), compiled once
per machine (numba's on-disk cache) and shared by every kernel.

- `_divf`, `_maxnum`, `_minnum`, `_maximumf`, `_minimumf`, `_f32`, `_wrap`,
  `_index_cast`, `_m_log`, `_m_sqrt`, `_m_sin`, `_m_cos`: `tapeflow.semantics.JIT_FORMS`
  compiled (the table's reference functions themselves, or their numba form next to
  them where the reference is CPython-only code or libm's NaN is not the table's);
  test/python/hwmodel/test_jit.py compares each with the reference on special values, bit for
  bit, and test_semantics_nan.py every kernel op on NaN-making operands.
- `_grow` ... `_wbulk`: `compiled.Trace`'s counter and phase-window logic (`window_start`,
  `window_bulk`, `window_end`) on a kernel's local state. They are compiled for the one
  signature kernels call them with (`_I`, `_A1`, `_A2`), not lazily: numba would compile a
  lazy function again for every tuple of integer literals a call site passes (a window's
  op count, a counter's index), about 100 compiles of `_wbulk` for the bundled kernels.

Without numba the module still imports (plain Python functions), so the kernel
translator can be tested anywhere.
"""

import numpy as np

from tapeflow.semantics import JIT_FORMS

try:
    from numba import njit as _njit
except ImportError:  # pragma: no cover - numba is the optional extra `fast`

    def _njit(*_: object, **__: object):  # type: ignore[no-untyped-def]
        return lambda f: f


_NONE = -9223372036854775807 - 1
"""`None` of a phase-end induction value (no iteration has it)."""
_I, _A1, _A2 = "int64", "int64[::1]", "int64[:, ::1]"
"""A kernel's integers, its 1-D arrays (counters, accesses, phase ends) and phase-end
counters (numba's type names)."""

_divf = _njit(cache=True)(JIT_FORMS["_divf"])
_maxnum = _njit(cache=True)(JIT_FORMS["_maxnum"])
_minnum = _njit(cache=True)(JIT_FORMS["_minnum"])
_maximumf = _njit(cache=True)(JIT_FORMS["_maximumf"])
_minimumf = _njit(cache=True)(JIT_FORMS["_minimumf"])
_f32 = _njit(cache=True)(JIT_FORMS["_f32"])
_wrap = _njit(cache=True)(JIT_FORMS["_wrap"])
_m_log = _njit(cache=True)(JIT_FORMS["_m_log"])
_m_sqrt = _njit(cache=True)(JIT_FORMS["_m_sqrt"])
_m_sin = _njit(cache=True)(JIT_FORMS["_m_sin"])
_m_cos = _njit(cache=True)(JIT_FORMS["_m_cos"])
_index_cast = _njit(cache=True)(JIT_FORMS["_index_cast"])


@_njit([f"({_A1}, {_I}, {_I})", f"({_A2}, {_I}, {_I})"], cache=True)
def _grow(a, p, rows):
    """`a` with room for at least `rows` rows (twice as many as it had, or more), its first
    `p` kept; copied element by element: a slice assignment compiles numba's shape-mismatch
    error path (seconds, once per machine)."""
    b = np.empty((max(2 * a.shape[0], rows),) + a.shape[1:], a.dtype)
    src, dst = a.ravel(), b.ravel()
    for i in range(p * a[:1].size):
        dst[i] = src[i]
    return b


@_njit([f"({_A1}, {_A1}, {_I}, {_I}, {_I})"], cache=True)
def _count(bc, fo, nf, k, n):
    """Counter `k` += `n`, its first execution noted in `fo` (`nf` of them so far)."""
    if bc[k] == 0:
        fo[nf] = k
        nf += 1
    bc[k] += n
    return nf


@_njit([f"({_A1}, {_A2}, {_I}, {_I}, {_A1}, {_I}, {_I})"], cache=True)
def _record(pe, pebc, n, p, bc, k, rest):
    if n == pe.shape[0]:
        pe = _grow(pe, n, n + 1)
        pebc = _grow(pebc, n, n + 1)
    pe[n] = p
    for j in range(bc.shape[0]):
        pebc[n, j] = bc[j]
    if k >= 0:
        pebc[n, k] -= rest
    return n + 1, pe, pebc


@_njit([f"({_A1}, {_I}, {_I}, {_I}, {_I}, {_I})"], cache=True)
def _wstart(wn, win, c, n, r0, r2):
    w0 = wn[0] - n * c - wn[1]
    j = max(1, -(-(win - w0) // c))
    return r0 + (j - 1) * r2


@_njit([f"({_A1}, {_I}, {_I}, {_I}, {_I}, {_I}, {_I}, {_I}, {_A1}, {_I}, {_A1}, {_A2}, {_I})"],
       cache=True)  # fmt: skip
def _wbulk(wn, win, c, n, r0, r2, iv, k, bc, p, pe, pebc, npe):
    j = (iv - r0) // r2 + 1
    rest = n - j
    npe, pe, pebc = _record(pe, pebc, npe, p, bc, k, rest)
    wn[1] = wn[0] - rest * c
    j += -(-win // c)
    return (r0 + (j - 1) * r2 if j <= n else _NONE), npe, pe, pebc
