"""Pointers as Enzyme's users write them (issue 23): returned pointers, `void *`,
realloc/posix_memalign/aligned_alloc, local `double **` from mallocs, views passed as
array parameters, and two loop forms of gem5-SALAM's kernels. Each gradient against
central differences of the primal, and the primal against a NumPy formula (so that the
translation itself, not only its derivative, is checked)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, loss_fn, u


def check(src: str, name: str, args, want: float):
    """The primal's value is `want` (NumPy) and its gradient the central differences'."""
    module = compile_and_differentiate(src, functions=[name])
    assert loss_fn(module, name, args) == pytest.approx(want, rel=1e-12)
    check_fd(module, name, args)


def test_for_from_a_macro_and_a_reused_counter():
    src = """
    #define FOR(i, n) for (int i = 0; i < (n); i++)
    double f(double *a, double *b, int n, int steps) {
      int t, i, j;
      for (t = 0; t < steps; t++) {
        for (i = 1; i < n - 1; i++)
          FOR(j, n) b[i * n + j] = a[i * n + j] * a[(i - 1) * n + j];
        for (i = 1; i < n - 1; i++)
          for (j = 0; j < n; j++) a[i * n + j] = 0.5 * b[i * n + j] + a[(i + 1) * n + j];
      }
      double s = 0.0;
      FOR(k, n * n) s += a[k] * a[k];
      return s;
    }
    """
    a, b, n = u(16), u(16, seed=1), 4
    ref, tmp = a.reshape(n, n).copy(), b.reshape(n, n).copy()
    for _ in range(2):
        for i in range(1, n - 1):
            tmp[i] = ref[i] * ref[i - 1]
        for i in range(1, n - 1):
            ref[i] = 0.5 * tmp[i] + ref[i + 1]
    check(src, "f", [a, b, n, 2], float((ref**2).sum()))


def test_view_passed_as_an_array_parameter():
    src = """
    #define M 3
    double rowsum(double a[][M], int r) {
      double s = 0.0;
      for (int i = 0; i < r; i++)
        for (int j = 0; j < M; j++) s += a[i][j] * a[i][j];
      return s;
    }
    void scale(double a[][M], double k) { a[1][0] *= k; }
    double pair(double a[][M]) { return rowsum(a, 2) * a[1][2]; }
    double f(double *x, int n) {
      double s = rowsum(x, 1);
      scale(x + M, 2.0);
      for (int i = 0; i < n - 1; i++) s += pair(x + i * M);
      return s;
    }
    """
    x, n = u(12), 4
    y = x.copy()
    y[6] *= 2.0  # a[1][0] of the view x + M
    rows = y.reshape(n, 3)
    want = (rows[0] ** 2).sum() + sum((rows[i : i + 2] ** 2).sum() * rows[i + 1, 2] for i in range(n - 1))
    check(src, "f", [x, n], float(want))


def test_pointer_returned():
    src = """
    #include <stdlib.h>
    double *row(double *a, int i, int n) { return a + i * n; }
    double *last(double *a, int m, int n) { double *p = row(a, m - 1, n); return p + 1; }
    double *squares(const double *x, int n) {
      double *t = malloc(n * sizeof(double));
      for (int i = 0; i < n; i++) t[i] = x[i] * x[i];
      return t;
    }
    double f(double *a, int m, int n) {
      double s = 0.0;
      for (int i = 0; i < m; i++) {
        double *r = row(a, i, n);
        r[0] = r[0] * r[1];  /* written through the returned view: a is written */
        s += r[0] * last(a, m, n)[0];
      }
      double *q = squares(a, n);
      s += q[1] * row(a + 1, 1, n)[0];
      free(q);
      return s;
    }
    """
    a, m, n = u(12), 3, 4
    b = a.copy()
    s = 0.0
    for i in range(m):
        b[i * n] = b[i * n] * b[i * n + 1]
        s += b[i * n] * b[(m - 1) * n + 1]
    s += b[1] ** 2 * b[1 + n]
    check(src, "f", [a, m, n], s)


def test_void_pointers_realloc_and_aligned_allocations():
    src = """
    #include <stdlib.h>
    static void scale(void *p, int n, double k) {
      double *x = (double *)p;
      for (int i = 0; i < n; i++) x[i] *= k;
    }
    double f(double *x, int n) {
      void *mem = malloc(n * sizeof(double));
      double *t = (double *)mem;
      for (int i = 0; i < n; i++) t[i] = x[i] * x[i];
      scale((void *)t, n, 3.0);
      void *v = x;
      double *y = v;
      double *g = aligned_alloc(64, n * sizeof(double));
      double *h;
      posix_memalign((void **)&h, 64, n * sizeof(double));
      for (int i = 0; i < n; i++) { g[i] = t[i] * y[i]; h[i] = y[i]; }
      g = realloc(g, 2 * n * sizeof(double));   /* grows: the first n kept */
      for (int i = n; i < 2 * n; i++) g[i] = h[i - n] * 0.5;
      double s = 0.0;
      for (int i = 0; i < 2 * n; i++) s += g[i] * g[i];
      double *r = (double *)realloc(h, sizeof(double) * 2);  /* shrinks: h[0], h[1] */
      s += r[0] * r[1];
      free(mem); free(g); free(r);
      return s;
    }
    """
    x, n = u(5), 5
    g = np.concatenate([3 * x**3, 0.5 * x])
    check(src, "f", [x, n], float((g**2).sum() + x[0] * x[1]))


def test_local_table_of_rows_from_mallocs():
    src = """
    #include <stdlib.h>
    double frob(double **a, int n, int k) {
      double s = 0.0;
      for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++) s += a[i][j] * a[i][j];
      return s;
    }
    double f(double *x, int n, int k) {
      double **m = (double **)malloc(n * sizeof(double *));
      for (int i = 0; i < n; i++) m[i] = (double *)malloc(k * sizeof(double));
      double **z = calloc(n, sizeof(double *));
      for (int i = 0; i < n; i++) z[i] = calloc(k, sizeof(double));
      for (int i = 0; i < n; i++)
        for (int j = 0; j < k; j++) { m[i][j] = x[i * k + j] * x[j]; z[i][j] += m[i][j]; }
      double s = frob(m, n, k) * z[n - 1][k - 1];
      for (int i = 0; i < n; i++) { free(m[i]); free(z[i]); }
      free(m);
      free(z);
      return s;
    }
    """
    x, n, k = u(6), 2, 3
    m = x.reshape(n, k) * x[:k]
    check(src, "f", [x, n, k], float((m**2).sum() * m[-1, -1]))


def test_pointers_initialized_to_null():
    """`T *p = NULL;` (or `0`, `(T *)0`) then `p = malloc(...)` or a view, as Enzyme's
    users write it: bound where it is assigned."""
    src = """
    #include <stdlib.h>
    double f(double *x, int n) {
      double *b = NULL;
      double *c = (double *)0;
      void *v = 0;
      b = malloc(n * sizeof(double));
      c = x + 1;
      v = malloc(n * sizeof(double));
      double *t = v;
      for (int i = 0; i < n; i++) { b[i] = x[i] * c[0]; t[i] = b[i] * x[i]; }
      double s = 0.0;
      for (int i = 0; i < n; i++) s += t[i] * b[i];
      free(b); free(v);
      return s;
    }
    """
    x, n = u(4), 4
    b = x * x[1]
    check(src, "f", [x, n], float((b * x * b).sum()))


def test_null_tests_of_bound_pointers():
    """`if (!b) return ...;`, `v == NULL || ...`, `if (p != NULL)`: a pointer bound to an
    array is never null (allocations are assumed to succeed), so each is a constant."""
    src = """
    #include <stdlib.h>
    static double sumsq(const double *v, int n) {
      if (v == NULL || n <= 0) return 0.0;
      double s = 0.0;
      for (int i = 0; i < n; i++) s += v[i] * v[i];
      return s;
    }
    double f(double *x, int n) {
      double *b = malloc(n * sizeof(double));
      if (!b) return -1.0;
      if (NULL != b && x)
        for (int i = 0; i < n; i++) b[i] = x[i] * x[(i + 1) % n];
      double r = sumsq(b, n);
      if (b != NULL) free(b);
      return r;
    }
    """
    x, n = u(4), 4
    check(src, "f", [x, n], float(((x * np.roll(x, -1)) ** 2).sum()))
