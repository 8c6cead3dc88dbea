"""The shipped `<cblas.h>` (issue 35 item 5): each routine's values against a NumPy
re-implementation of the BLAS definition, in both layouts, with and without transposes,
strided and backwards vectors and padded leading dimensions, and its gradient (arrays and
the scalars alpha, beta) against finite differences. The routines are loops in the header,
so the gradients are the AD pass's own; they stay bit-identical across the variants."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, compile_variant, u

from tapeflow import runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

ROW, COL, NOTRANS, TRANS, CONJTRANS = 101, 102, 111, 112, 113

# Each wrapper returns a scalar of the routine's output, so every input has a gradient.
SRC = """
#include <cblas.h>
static double weighted(const double *w, const double *y, int len) {
  double s = 0.0;
  for (int i = 0; i < len; i++) s += w[i] * y[i] * y[i];
  return s;
}
double dot(double *x, double *y, int n, int incx, int incy) {
  return cblas_ddot(n, x, incx, y, incy) * cblas_ddot(n, x, incx, x, incx);
}
double axpy(double *x, double *y, const double *w, int n, int incx, int incy, int len,
            double alpha) {
  cblas_daxpy(n, alpha, x, incx, y, incy);
  return weighted(w, y, len);
}
double scal(double *x, const double *w, int n, int incx, int len, double alpha) {
  cblas_dscal(n, alpha, x, incx);
  return weighted(w, x, len);
}
double nrm2(double *x, int n, int incx) { return cblas_dnrm2(n, x, incx); }
double gemv(double *A, double *x, double *y, const double *w, int layout, int trans, int m,
            int n, int lda, int incx, int incy, int len, double alpha, double beta) {
  cblas_dgemv(layout, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
  return weighted(w, y, len);
}
double gemm(double *A, double *B, double *C, const double *w, int layout, int ta, int tb,
            int m, int n, int k, int lda, int ldb, int ldc, int len, double alpha,
            double beta) {
  cblas_dgemm(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  return weighted(w, C, len);
}
"""
FUNCTIONS = ["dot", "axpy", "scal", "nrm2", "gemv", "gemm"]


@pytest.fixture(scope="module")
def module():
    return compile_and_differentiate(SRC, functions=FUNCTIONS)


# --- NumPy's BLAS (the definitions, written from the reference's documentation) -----------

def _at(n, inc):
    """The indices of a vector of n elements with increment inc (backwards for inc < 0)."""
    start = 0 if inc > 0 else (1 - n) * inc
    return start + np.arange(n) * inc


def _op(A, layout, trans, rows, cols, ld):
    """op(A) of the stored rows x cols matrix A (leading dimension ld)."""
    i, j = np.indices((rows, cols))
    stored = A[i * ld + j] if layout == ROW else A[i + j * ld]
    return stored.T if trans != NOTRANS else stored


def _gemv(A, x, y, layout, trans, m, n, lda, incx, incy, alpha, beta):
    op = _op(A, layout, trans, m, n, lda)
    y = y.copy()
    iy, ix = _at(op.shape[0], incy), _at(op.shape[1], incx)
    y[iy] = alpha * op @ x[ix] + beta * y[iy]
    return y


def _gemm(A, B, C, layout, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta):
    a_rows, a_cols = (m, k) if ta == NOTRANS else (k, m)
    b_rows, b_cols = (k, n) if tb == NOTRANS else (n, k)
    prod = _op(A, layout, ta, a_rows, a_cols, lda) @ _op(B, layout, tb, b_rows, b_cols, ldb)
    i, j = np.indices((m, n))
    at = i * ldc + j if layout == ROW else i + j * ldc
    C = C.copy()
    C[at] = alpha * prod + beta * C[at]
    return C


def _run(module, name, args):
    return runner.run_function(module, name, [a.copy() if isinstance(a, np.ndarray) else a
                                              for a in args])


# --- level 1 -------------------------------------------------------------------------------

@pytest.mark.parametrize("incx, incy", [(1, 1), (2, -1), (-2, 3)])
def test_ddot(module, incx, incy):
    x, y, n = u(8, seed=1), u(9, seed=2), 3
    ix, iy = _at(n, incx), _at(n, incy)
    want = (x[ix] @ y[iy]) * (x[ix] @ x[ix])
    assert _run(module, "dot", [x, y, n, incx, incy]).results[0] == pytest.approx(want, rel=1e-14)
    check_fd(module, "dot", [x, y, n, incx, incy])


@pytest.mark.parametrize("incx, incy", [(1, 1), (-1, 2), (3, -2)])
def test_daxpy(module, incx, incy):
    x, y, w, n = u(9, seed=3), u(7, seed=4), u(7, seed=5), 3
    args = [x, y, w, n, incx, incy, 7, 0.75]
    got = _run(module, "axpy", args).arguments[1]
    want = y.copy()
    want[_at(n, incy)] += 0.75 * x[_at(n, incx)]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    _, scalars = check_fd(module, "axpy", args)
    assert set(scalars) == {7}


@pytest.mark.parametrize("incx", [1, 2, 0, -1])
def test_dscal(module, incx):
    x, w = u(7, seed=6), u(7, seed=7)
    args = [x, w, 3, incx, 7, -1.5]
    got = _run(module, "scal", args).arguments[0]
    want = x.copy()
    if incx > 0:  # the reference BLAS does nothing for incx < 1
        want[np.arange(3) * incx] *= -1.5
    np.testing.assert_array_equal(got, want)
    check_fd(module, "scal", args)


@pytest.mark.parametrize("incx", [1, 3, -1])
def test_dnrm2(module, incx):
    x = u(10, seed=8)
    want = np.linalg.norm(x[np.arange(4) * incx]) if incx > 0 else 0.0
    assert _run(module, "nrm2", [x, 4, incx]).results[0] == pytest.approx(want, rel=1e-14)
    if incx > 0:  # at 0 the square root has no derivative
        arrays, _ = check_fd(module, "nrm2", [x, 4, incx])
        want_grad = np.zeros_like(x)
        want_grad[np.arange(4) * incx] = x[np.arange(4) * incx] / want
        np.testing.assert_allclose(arrays[0], want_grad, rtol=1e-13)


# --- level 2 and 3: both layouts, every transpose ------------------------------------------

@pytest.mark.parametrize("layout, trans", list(itertools.product([ROW, COL], [NOTRANS, TRANS, CONJTRANS])))
@pytest.mark.parametrize("incx, incy, beta", [(1, 1, 0.5), (2, -1, 0.0)])
def test_dgemv(module, layout, trans, incx, incy, beta):
    m, n = 3, 4
    lda = (n if layout == ROW else m) + 1  # a padded leading dimension
    A = u(lda * (m if layout == ROW else n), seed=9)
    x, y, w = u(12, seed=10), u(12, seed=11), u(12, seed=12)
    if beta == 0.0:
        y[:] = np.nan  # beta = 0: y is not read
    args = [A, x, y, w, layout, trans, m, n, lda, incx, incy, 12, 0.8, beta]
    got = _run(module, "gemv", args).arguments[2]
    want = _gemv(A, x, np.nan_to_num(y) if beta == 0.0 else y, layout, trans, m, n, lda,
                 incx, incy, 0.8, beta)
    rows = m if trans == NOTRANS else n
    touched = _at(rows, incy)
    np.testing.assert_allclose(got[touched], want[touched], rtol=1e-13)
    if beta != 0.0:
        np.testing.assert_array_equal(np.delete(got, touched), np.delete(y, touched))
        check_fd(module, "gemv", args)


@pytest.mark.parametrize("layout, ta, tb",
                         list(itertools.product([ROW, COL], [NOTRANS, TRANS], [NOTRANS, CONJTRANS])))
def test_dgemm(module, layout, ta, tb):
    m, n, k = 2, 3, 4
    a_rows, a_cols = (m, k) if ta == NOTRANS else (k, m)
    b_rows, b_cols = (k, n) if tb == NOTRANS else (n, k)
    pad = 1

    def ld(rows, cols):
        return (cols if layout == ROW else rows) + pad

    lda, ldb, ldc = ld(a_rows, a_cols), ld(b_rows, b_cols), ld(m, n)
    A = u(lda * max(a_rows, a_cols), seed=13)
    B = u(ldb * max(b_rows, b_cols), seed=14)
    C, w = u(ldc * max(m, n), seed=15), u(ldc * max(m, n), seed=16)
    args = [A, B, C, w, layout, ta, tb, m, n, k, lda, ldb, ldc, C.size, 1.25, -0.5]
    got = _run(module, "gemm", args).arguments[2]
    want = _gemm(A, B, C, layout, ta, tb, m, n, k, lda, ldb, ldc, 1.25, -0.5)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    arrays, scalars = check_fd(module, "gemm", args)
    assert set(arrays) == {0, 1, 2, 3} and set(scalars) == {14, 15}


def test_dgemm_beta_zero_does_not_read_c(module):
    """beta = 0: C's old values (NaN here) are not read, as in the reference BLAS."""
    A, B = u(6, seed=17), u(6, seed=18)
    C = np.full(4, np.nan)
    got = _run(module, "gemm", [A, B, C, np.ones(4), ROW, NOTRANS, NOTRANS, 2, 2, 3, 3, 2, 2,
                                4, 1.0, 0.0]).arguments[2]
    np.testing.assert_allclose(got, (A.reshape(2, 3) @ B.reshape(3, 2)).ravel(), rtol=1e-14)


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
def test_variants_bit_identical(variant):
    """dgemm's gradient is the same bits under every TapeFlow variant."""
    A, B, C, w = u(12, seed=19), u(12, seed=20), u(9, seed=21), u(9, seed=22)

    def shadows(v):
        args = [A.copy(), np.zeros(12), B.copy(), np.zeros(12), C.copy(), np.zeros(9),
                w.copy(), np.zeros(9), COL, TRANS, NOTRANS, 3, 3, 4, 4, 4, 3, 9, 1.5, 0.5, 1.0]
        r = runner.run_function(compile_variant(SRC, "gemm", v), "gemm_grad", args)
        return b"".join(r.arguments[i].tobytes() for i in (1, 3, 5, 7)) + np.array(r.results).tobytes()

    assert shadows(variant) == shadows("enzyme")


@pytest.mark.parametrize("file, function, arrays", [
    ("blas_least_squares.c", "lsq", [u(6, seed=23), u(3, seed=24), u(2, seed=25)]),
    ("blas_gemm_colmajor.c", "gram_norm", [u(4, seed=26), u(6, seed=27)]),
])
def test_blind_programs_bit_identical(file, function, arrays):
    """The blind corpus's CBLAS programs: the same gradient bits under every variant."""
    from helpers.paths import ROOT

    src = (ROOT / "test" / "python" / "frontends" / "cfront_blind" / file).read_text()

    def shadows(v):
        args = [x for a in arrays for x in (a.copy(), np.zeros_like(a))]
        r = runner.run_function(compile_variant(src, function, v), f"{function}_grad", [*args, 1.0])
        return b"".join(r.arguments[i].tobytes() for i in range(1, len(args), 2))

    assert shadows("regions") == shadows("enzyme") == shadows("tapeflow")
