"""Allocation in C written for Enzyme (issue 35): functions registered with
`__enzyme_allocation_like`, `realloc` in a loop and pointer globals; each construct's
gradient against central differences."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, gradient_bits, u  # noqa: E402

# A bump allocator over a global pool, registered as allocating `size` bytes (argument
# 1) and freed by `release(off, p)` (indices "2,-1"): its memory is a malloc's, its pool
# and its body are not the program's.
ALLOCATION_LIKE = """
char pool[4096];
int used = 0;
void *bump(char *base, int size, int *off) { int at = *off; *off += size; return base + at; }
void release(int *off, void *p) { *off -= 8; }

static double *scaled(const double *x, int n) {
  double *y = (double *)bump(pool, n * sizeof(double), &used);
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i] + x[0];
  return y;
}

double energy(const double *x, int n) {
  double *y = scaled(x, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += y[i] * x[i];
  release(&used, y);
  return s;
}

void *__enzyme_allocation_like[4] = {(void *)bump, (void *)1, (void *)"2,-1", (void *)release};
"""


def test_allocation_like_is_malloc_of_its_size_argument():
    module = compile_and_differentiate(ALLOCATION_LIKE, functions=["energy"])
    text = str(module)
    assert "func.func @bump" not in text and "func.func @release" not in text
    assert "memref.global" not in text  # the allocator's pool and offset are not read
    x = u(6, seed=3)
    arrays, _ = check_fd(module, "energy", [x, 6])
    assert np.allclose(arrays[0], 3 * x**2 + x[0] + np.eye(6)[0] * np.sum(x), rtol=1e-12)


# A buffer grown by realloc in a counted loop: from NULL (`hist`), and from a malloc whose
# first elements the loop keeps (`walk`); at n = 1 the loop of `walk` does not run and the
# malloc'ed two elements stay.
REALLOC_LOOP = """
#include <stdlib.h>
double hist(const double *x, int n) {
  double *h = NULL;
  for (int i = 0; i < n; i++) {
    h = (double *)realloc(h, (i + 1) * sizeof(double));
    h[i] = (i == 0 ? 0.0 : h[i - 1]) + x[i] * x[i];
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += h[i] * x[i];
  free(h);
  return s;
}

double walk(const double *x, int n) {
  double *p = malloc(2 * sizeof(double));
  p[0] = x[0];
  p[1] = x[0] * x[0];
  for (int i = 2; i < n + 1; i++) {
    p = realloc(p, 2 * i * sizeof(double));
    p[2 * i - 2] = p[2 * i - 3] * x[i - 1];
    p[2 * i - 1] = p[1] + p[2 * i - 2];
  }
  double r = p[2 * n - 1];
  free(p);
  return r;
}
"""


@pytest.mark.parametrize("n", [1, 5])
def test_realloc_in_a_counted_loop(n):
    for name in ("hist", "walk"):
        module = compile_and_differentiate(REALLOC_LOOP, functions=[name])
        text = str(module)
        body = text.split(f"func.func @{name}(")[1].split("func.func")[0]
        assert body.count("memref.alloc(") == (1 if name == "hist" else 2)
        x = u(6, seed=n) + 1.5
        arrays, _ = check_fd(module, name, [x, n])
        if name == "hist":
            h = np.cumsum(x[:n] ** 2)
            want = np.zeros(6)
            want[:n] = h + 2 * x[:n] * np.cumsum(x[:n][::-1])[::-1]
            assert np.allclose(arrays[0], want, rtol=1e-10)


# A local array of pointers whose rows a counted loop mallocs, row k of k + 1 doubles:
# one 2-D buffer of the longest row; the rows are read after the loop, through
# `*rows[k]` and `rows[k][j]`.
POINTER_ARRAY = """
#include <stdlib.h>
double triangle(const double *x, int n) {
  double *rows[5];
  for (int k = 0; k < 5; k++) {
    rows[k] = (double *)malloc((k + 1) * sizeof(double));
    for (int j = 0; j <= k; j++) rows[k][j] = x[j] * x[k];
  }
  double s = 0;
  for (int k = 0; k < n; k++) {
    s += *rows[k];
    for (int j = 1; j <= k; j++) s += rows[k][j] * rows[k][j];
  }
  for (int k = 0; k < 5; k++) free(rows[k]);
  return s;
}
"""


def test_pointer_array_rows_allocated_in_a_loop():
    module = compile_and_differentiate(POINTER_ARRAY, functions=["triangle"])
    assert "memref<?x?xf64>" in str(module)
    x = u(5, seed=7)
    arrays, _ = check_fd(module, "triangle", [x, 4])
    want = np.zeros(5)  # s = sum_k x0 xk + sum_{1<=j<=k<4} (xj xk)^2
    for k in range(4):
        want[0] += x[k]
        want[k] += x[0]
        for j in range(1, k + 1):
            want[j] += 2 * (x[j] * x[k]) * x[k]
            want[k] += 2 * (x[j] * x[k]) * x[j]
    assert np.allclose(arrays[0], want, rtol=1e-12)


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
@pytest.mark.parametrize("src, name", [(ALLOCATION_LIKE, "energy"), (REALLOC_LOOP, "hist"),
                                       (REALLOC_LOOP, "walk"), (POINTER_ARRAY, "triangle")])
def test_gradient_bits_across_variants(src, name, variant):
    """TapeFlow's regions and streamed tapes give Enzyme's layout's gradient bit for bit."""
    call = [u(6, seed=11), np.zeros(6), 4, 1.0]
    want = gradient_bits(src, name, call, "enzyme")
    assert np.frombuffer(want).any()
    assert gradient_bits(src, name, call, variant) == want
