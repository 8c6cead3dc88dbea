"""Function pointers to functions of the file (issue 35 item 3): calls through a
parameter, a local, a table indexed by a constant or by an integer argument, and a
pointer reassigned in a loop; gradients against finite differences for every entry a
pointer may take, and bit-identical across the variants."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, gradient_bits

from helpers.paths import ROOT

from tapeflow import runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

SRC = (ROOT / "test" / "tapeflow-cc" / "function-pointers.c").read_text() + """
static double neg(double a) { return -a; }
double switched(const double *x, int n) {
  unary op = sq;
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    if (x[i] < 0.0) op = neg;
    s += op(x[i]);
  }
  return s;
}
"""
X = np.array([1.5, -0.5, 2.0])
ACTS = [lambda a: a * a, lambda a: a ** 3, lambda a: 3 * a]
DERIVS = [lambda a: 2 * a, lambda a: 3 * a * a, lambda a: 3.0 + 0 * a]


@pytest.fixture(scope="module")
def module():
    return compile_and_differentiate(SRC, functions=["pick", "switched"])


@pytest.mark.parametrize("k", [0, 1, 2])
def test_table_by_argument(module, k):
    """pick = table[k](x0) + cube(x1) + lin(x2) + sq(x1) + 1."""
    arrays, _ = check_fd(module, "pick", [X.copy(), k])
    want = [DERIVS[k](X[0]), 3 * X[1] ** 2 + 2 * X[1], 3.0]
    np.testing.assert_allclose(arrays[0], want)
    value = runner.run_function(module, "pick", [X.copy(), k]).results[0]
    assert value == pytest.approx(ACTS[k](X[0]) + X[1] ** 3 + 6.0 + X[1] ** 2 + 1.0)


def test_pointer_reassigned_in_a_loop(module):
    """sq until the first negative entry, neg from there on."""
    x = np.array([1.5, 0.7, -0.5, 2.0])
    arrays, _ = check_fd(module, "switched", [x.copy(), 4])
    np.testing.assert_allclose(arrays[0], [3.0, 1.4, -1.0, -1.0])


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
def test_variants_bit_identical(variant):
    call = [X, np.zeros(3), 1, 1.0]
    assert gradient_bits(SRC, "pick", call, variant) == gradient_bits(SRC, "pick", call, "enzyme")
