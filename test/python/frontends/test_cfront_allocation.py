"""Allocation in C written for Enzyme (issue 35): functions registered with
`__enzyme_allocation_like`, `realloc` in a loop and pointer globals; each construct's
gradient against central differences."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, u  # noqa: E402

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
