"""Backward gotos (loops made of jumps): the function runs as a loop over its labels, and
its gradient is that of the same computation written with loops, and finite
differences'; a backward goto inside a loop is still refused, located."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, enzyme_gradient

from tapeflow.diagnostics import ToolError
from tapeflow.frontends.c import compile_c

JUMPS = """
#include <math.h>
double jumps(double *x, int n) {
  double s = 0.0;
  int i = 0;
top:
  s = s * 0.5 + sin(x[i % n]) * x[0];
  i++;
  if (i < 3 * n) goto top;
  if (s > 100.0) goto done;
twice:
  s = s * 2.0 + x[1];
  if (s < 1.0) goto twice;
done:
  return s;
}
double loops(double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < 3 * n; i++)
    s = s * 0.5 + sin(x[i % n]) * x[0];
  if (s > 100.0) return s;
  do {
    s = s * 2.0 + x[1];
  } while (s < 1.0);
  return s;
}
"""


def test_backward_gotos_give_the_loops_gradient():
    module = compile_and_differentiate(JUMPS, functions=["jumps", "loops"])
    x = np.array([0.3, 0.2, 0.4])
    jumped, _ = enzyme_gradient(module, "jumps", [x, 3])
    looped, _ = enzyme_gradient(module, "loops", [x, 3])
    assert jumped[0] == pytest.approx(looped[0], rel=1e-12)
    assert jumped[0].any()
    check_fd(module, "jumps", [x, 3])


def test_backward_goto_in_a_loop_is_refused():
    src = """
double f(double x) {
again:
  for (int i = 0; i < 2; i++) {
    x = x * 0.5;
    if (x > 1.0) goto again;
  }
  return x;
}
"""
    with pytest.raises(ToolError, match=r"^test.c:6:18: unsupported C: a backward goto"):
        compile_c(src, "test.c", functions=["f"])


@pytest.mark.parametrize("variant", ["enzyme", "regions", "tapeflow"])
def test_backward_gotos_bits_across_variants(variant):
    from helpers.cfront import gradient_bits

    call = [np.array([0.3, 0.2, 0.4]), np.zeros(3), 3, 1.0]
    want = gradient_bits(JUMPS, "jumps", call, "enzyme")
    assert gradient_bits(JUMPS, "jumps", call, variant) == want
    module = compile_and_differentiate(JUMPS, functions=["jumps"])
    assert enzyme_gradient(module, "jumps", [call[0], 3])[0][0].tobytes() == want
