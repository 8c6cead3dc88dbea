"""Whole-struct copies (Enzyme's mixedstruct1-old.c, -sp.c): `*box = *p` into one
malloc'ed struct, `T s = *p` into a struct local, copies of structs with integer fields
in loops over an array of them. Each copies the scalar fields as the scalar assignments
they are and binds the pointer fields to the buffers they name; each gradient against
central differences and a NumPy formula. Also a table of one row reached through `*m`
(mixedstruct1.c's `T **` of one pointer, whose row there is stored, not malloc'ed)."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, u

from tapeflow.diagnostics import ToolError
from tapeflow.frontends.c import compile_c

TILES = """
#include <stdlib.h>
#include <enzyme/enzyme.h>
typedef struct { long lo; long hi; double scale; double *data; } Frame;
double tiles(Frame *frame) {
  if (frame->hi - frame->lo > 2) {
    long mid = frame->lo + (frame->hi - frame->lo) / 2;
    Frame *left = malloc(sizeof(Frame));
    Frame *right = malloc(sizeof(Frame));
    *left = *frame;
    *right = *frame;
    left->hi = mid;
    right->lo = mid;
    right->scale = 2.0 * frame->scale;
    double s = tiles(left) + tiles(right);
    free(left);
    free(right);
    return s;
  }
  Frame here = *frame;
  double s = 0.0;
  for (long i = here.lo; i < here.hi; i++) s += here.scale * here.data[i] * here.data[i];
  return s;
}
void d(Frame *f, Frame *df) { __enzyme_autodiff((void *)tiles, f, df); }
"""


def _tiles(scale, data, lo, hi):
    """The recursion in NumPy: (value, d/d scale, d/d data)."""
    if hi - lo > 2:
        mid = lo + (hi - lo) // 2
        a, b = _tiles(scale, data, lo, mid), _tiles(2 * scale, data, mid, hi)
        return a[0] + b[0], a[1] + 2 * b[1], a[2] + b[2]
    g = np.zeros_like(data)
    g[lo:hi] = 2 * scale * data[lo:hi]
    return scale * np.sum(data[lo:hi] ** 2), np.sum(data[lo:hi] ** 2), g


def test_recursive_copies_of_a_struct_with_a_pointer_field():
    """`*left = *frame` copies the integer and float fields and binds `left->data` to
    frame's memref: the recursion halves [lo, hi) and doubles the right half's scale."""
    module = compile_and_differentiate(TILES)
    scale, ints, data = u(1), np.array([1, 10], dtype=np.int64), u(11, seed=3)
    arrays, _ = check_fd(module, "tiles", [scale, ints, data])
    _, dscale, ddata = _tiles(scale[0], data, 1, 10)
    np.testing.assert_allclose(arrays[0], [dscale], rtol=1e-12)
    np.testing.assert_allclose(arrays[2], ddata, rtol=1e-12)
    assert list(ints) == [1, 10]


SORT = """
#include <enzyme/enzyme.h>
typedef struct { double key; int tag; double w; } S;
double sorted(S *ps, int n) {
  for (int i = 1; i < n; i++) {
    S cur = ps[i];
    int j = i - 1;
    while (j >= 0 && ps[j].key > cur.key) { ps[j + 1] = ps[j]; j--; }
    ps[j + 1] = cur;
  }
  double r = 0.0;
  for (int k = 0; k < n; k++) r += (k + 1) * ps[k].key * ps[k].w + ps[k].tag;
  return r;
}
void d(S *ps, S *dps) { __enzyme_autodiff((void *)sorted, ps, dps, 4); }
"""


def test_struct_copies_in_loops_over_an_array_of_structs():
    """Insertion sort of structs with an integer field (`cur = ps[i]`, `ps[j + 1] =
    ps[j]`): the gradient follows each float field to its sorted rank."""
    module = compile_and_differentiate(SORT)
    floats = np.array([0.7, 1.5, -1.2, 0.5, 2.5, -2.0, 0.1, 3.0])  # (key, w) per struct
    tags = np.array([3, 1, 4, 1], dtype=np.int64)
    arrays, _ = check_fd(module, "sorted", [floats, tags, 4])
    keys, w = floats[0::2], floats[1::2]
    rank = np.empty(4)
    rank[np.argsort(keys)] = np.arange(4) + 1.0
    np.testing.assert_allclose(arrays[0][0::2], rank * w, rtol=1e-12)
    np.testing.assert_allclose(arrays[0][1::2], rank * keys, rtol=1e-12)


ONE_ROW = """
#include <stdlib.h>
#include <enzyme/enzyme.h>
double f(const double *x, int n) {
  double **m = malloc(sizeof(double *));
  *m = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) (*m)[i] = x[i] * x[i];
  double s = 0.0;
  for (int i = 0; i < n; i++) s += m[0][i] * x[i];
  free(*m);
  free(m);
  return s;
}
void d(double *x, double *dx) { __enzyme_autodiff((void *)f, x, dx, 5); }
"""


def test_one_row_table_through_deref():
    """`*m = malloc(...)` allocates the one row of `m` (a 1 x n memref): f = sum x^3."""
    module = compile_and_differentiate(ONE_ROW)
    x = u(5, seed=4)
    arrays, _ = check_fd(module, "f", [x, 5])
    np.testing.assert_allclose(arrays[0], 3 * x ** 2, rtol=1e-12)


def test_row_stored_into_a_table_is_refused():
    """mixedstruct1.c's `*frame1 = *frame`: another table's row stored into a local table
    of pointers (a pointer in memory) is one located error at the store."""
    src = ("#include <stdlib.h>\ndouble f(double **p) { double **q = malloc(sizeof(double *));\n"
           "  *q = *p; return q[0][0]; }")
    with pytest.raises(ToolError, match=re.escape(
            "test.c:3:3: unsupported C: a row of 'q' that is not malloc'ed")):
        compile_c(src, "test.c")
