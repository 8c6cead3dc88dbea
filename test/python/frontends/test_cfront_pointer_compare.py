"""Pointer comparisons (issue 35 item 6): `p < end`, `p != end` of pointers into one
array compare their offsets, so such loops translate (a `scf.while`) and differentiate;
pointers into different arrays are refused with one located line."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, enzyme_gradient, u

from helpers.paths import ROOT

from tapeflow.diagnostics import ToolError

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

SRC = (ROOT / "test" / "tapeflow-cc" / "pointer-compare.c").read_text() + """
double tail(double *x, int n) {
  double s = 1.0;
  double *end = x + n;
  double *p = x + 1;
  while (p != end) {
    s = s * p[0] + p[-1];
    p++;
  }
  return s;
}
"""


def test_gradients():
    module = compile_and_differentiate(SRC, functions=["sumsq", "tail"])
    x = u(6)
    arrays, _ = enzyme_gradient(module, "sumsq", [x.copy(), 6])
    assert np.array_equal(arrays[0], 2.0 * x)
    check_fd(module, "tail", [x.copy(), 6])


def test_pointers_into_different_arrays_are_refused():
    src = (
        "double f(double *x, double *end) { double s = 0.0; "
        "for (double *p = x; p < end; p++) s += *p; return s; }"
    )
    want = r"test.c:1:72: unsupported C: comparing pointers into different arrays \('p < end'\)"
    with pytest.raises(ToolError, match=want):
        compile_and_differentiate(src)
