"""`hypot`, `fmod`, `ldexp` and `frexp` (issue 35 item 6): compositions of table ops
(`tapeflow.frontends.c.libm`), so their values are checked against the C library's own
(`ctypes`), their gradients against finite differences and the exact formulas
(fmod: d/dy = -trunc(x/y); ldexp: 2^e; frexp's mantissa: 2^-e), and bit for bit across
the variants and natively.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import struct

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, compile_variant, enzyme_gradient

from tapeflow import native, runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
for _name in ("hypot", "fmod", "ldexp", "frexp"):
    getattr(LIBM, _name).restype = ctypes.c_double
LIBM.hypot.argtypes = LIBM.fmod.argtypes = [ctypes.c_double, ctypes.c_double]
LIBM.ldexp.argtypes = [ctypes.c_double, ctypes.c_int]
LIBM.frexp.argtypes = [ctypes.c_double, ctypes.POINTER(ctypes.c_int)]

CALLS = """
#include <math.h>
double h(double x, double y) { return hypot(x, y); }
double r(double x, double y) { return fmod(x, y); }
double l(double x, int e) { return ldexp(x, e); }
double m(double x) { int e; return frexp(x, &e); }
int fe(double x) { int e = 7; frexp(x, &e); return e; }
"""

SPECIAL = [0.0, -0.0, 5e-324, -3e-310, 2.2250738585072014e-308, 1.0, -1.5, 5.5, 0.1, 1e300,
           -1.7976931348623157e308, math.inf, -math.inf, math.nan]
PAIRS = [(7.0, 2.5), (-4.5, 2.5), (13.1, 2.5), (-0.8, 2.5), (6.0, -3.0), (-6.0, 3.0),
         (1e16, 3.0), (0.3, 0.1), (5.0, math.inf), (-5.0, -math.inf), (3.0, 0.0),
         (math.inf, 2.0), (1e-310, 3e-311), (2.0**52 + 1, 0.7)]


def _bits(v: float) -> bytes:
    return struct.pack("<d", v)


@pytest.fixture(scope="module")
def calls():
    return compile_and_differentiate(CALLS)


def _run(module, name, *args):
    return runner.run_function(module, name, list(args)).results[0]


def test_fmod_ldexp_frexp_are_the_c_librarys_bits(calls):
    """Exact functions, exactly: fmod for |x/y| < 2^53, ldexp, frexp (mantissa and
    exponent), with zeros' signs, subnormals, infinities and NaN."""
    for x, y in PAIRS:
        want = LIBM.fmod(x, y)
        got = _run(calls, "r", x, y)
        assert _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want)), (x, y, got, want)
    for x in SPECIAL:
        for e in (0, 3, -7, 1023, 1100, -1022, -1074, -1100, 2000):
            want = LIBM.ldexp(x, e)
            got = _run(calls, "l", x, e)
            same = _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want))
            assert same, (x, e, got, want)
        n = ctypes.c_int(0)
        want = LIBM.frexp(x, ctypes.byref(n))
        got = _run(calls, "m", x)
        assert _bits(got) == _bits(want) or (math.isnan(got) and math.isnan(want)), (x, got, want)
        if math.isfinite(x):
            assert _run(calls, "fe", x) == n.value, x


def test_hypot_within_an_ulp_of_the_c_library(calls):
    for x in SPECIAL[:11]:
        for y in (3.0, -4.0, 1e-3, 0.0):
            if abs(x) < 1e150:
                assert _run(calls, "h", x, y) == pytest.approx(LIBM.hypot(x, y), rel=2.3e-16)


KERNEL = """
#include <math.h>
double k(double *x, double *y, int n, double p) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    int e;
    double m = frexp(x[i], &e);
    s += hypot(x[i], y[i]) + fmod(x[i] * 3.0, p) * y[i] + ldexp(m * y[i], e - 2) + e * y[i];
  }
  return s;
}
"""

X = np.array([0.7, -2.3, 5.5, 11.0, -0.4])
Y = np.array([1.2, 0.5, -3.0, 2.0, 0.9])


def test_gradients_against_finite_differences():
    module = compile_and_differentiate(KERNEL, functions=["k"])
    check_fd(module, "k", [X.copy(), Y.copy(), 5, 0.9], eps=1e-7, rtol=1e-6)


def test_exact_derivatives():
    """fmod: d/dx = 1, d/dy = -trunc(x/y); ldexp: 2^e; frexp's mantissa: 2^-e."""
    src = """
    #include <math.h>
    double r(double x, double y) { return fmod(x, y); }
    double l(double x, int e) { return ldexp(x, e); }
    double m(double x) { int e; return frexp(x, &e); }
    """
    module = compile_and_differentiate(src, functions=["r", "l", "m"])
    for x, y in ((7.0, 2.5), (-13.1, 2.5), (6.5, -0.3)):
        _, g = enzyme_gradient(module, "r", [x, y])
        assert (g[0], g[1]) == (1.0, -math.trunc(x / y))
    for x, e in ((1.5, 3), (-0.25, -1030), (3.0, 1000)):
        assert enzyme_gradient(module, "l", [x, e])[1][0] == 2.0**e
    for x in (5.5, -0.1, 1e-300, 1e300):
        _, e = math.frexp(x)
        assert enzyme_gradient(module, "m", [x])[1][0] == 2.0**-e
    assert enzyme_gradient(module, "m", [1e-310])[1][0] == math.inf  # 2^1029 overflows


def _grad_bits(module, args) -> list[bytes]:
    call = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    r = runner.run_function(module, "k_grad", call)
    return [a.tobytes() for a in r.arguments if isinstance(a, np.ndarray)] + [
        _bits(v) for v in r.results
    ]


GRAD_ARGS = [X, np.zeros(5), Y, np.zeros(5), 5, 0.9, 1.0]


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
def test_variants_bit_identical(variant):
    want = _grad_bits(compile_variant(KERNEL, "k", "enzyme"), GRAD_ARGS)
    assert _grad_bits(compile_variant(KERNEL, "k", variant), GRAD_ARGS) == want


@pytest.mark.skipif(not native.tools_available(), reason="upstream MLIR 22 is not installed")
def test_native_bit_identical():
    module = compile_and_differentiate(KERNEL, functions=["k"])
    call = [a.copy() if isinstance(a, np.ndarray) else a for a in GRAD_ARGS]
    r = native.run_function_native(module, "k_grad", call)
    got = [a.tobytes() for a in call if isinstance(a, np.ndarray)] + [_bits(v) for v in r.results]
    assert got == _grad_bits(module, GRAD_ARGS)
