"""Local unions of same-size scalars (issue 35 item 6): the bits read through another
field are the C program's, the gradient through the float view is the finite
differences', and a value written through the integer view carries no derivative."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, compile_variant, enzyme_gradient

from helpers.paths import ROOT

from tapeflow import runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

LIT = ROOT / "test" / "tapeflow-cc" / "union-scalars.c"
SRC = LIT.read_text() + """
double through_int(double x) {
  union bits v;
  v.d = x;
  v.u = v.u + 1;
  return v.d * x;
}
"""
X = np.array([0.7, -2.3, 5.5, 11.0, -0.4])


@pytest.fixture(scope="module")
def module():
    return compile_and_differentiate(SRC, functions=["f", "through_int", "g"])


def test_values_are_the_bits_reinterpreted(module):
    exponents = [(struct.unpack("<Q", struct.pack("<d", x * x))[0] >> 52) & 2047 for x in X]
    want = sum(x * x * e for x, e in zip(X, exponents)) + X[-1] ** 2
    assert runner.run_function(module, "f", [X.copy(), 5]).results[0] == want
    one_up = struct.unpack("<f", struct.pack("<i", 1065353217))[0]
    assert runner.run_function(module, "g", [2.0]).results[0] == one_up * 2.0
    x = 1.25
    after = struct.unpack("<d", struct.pack("<Q", struct.unpack("<Q", struct.pack("<d", x))[0] + 1))[0]
    assert runner.run_function(module, "through_int", [x]).results[0] == after * x


def test_gradient_through_the_float_view(module):
    check_fd(module, "f", [X.copy(), 5])


def test_no_derivative_through_the_integer_view(module):
    """v.d written through v.u is a constant: d(v.d * x)/dx is v.d, not 2x."""
    x = 1.25
    after = struct.unpack("<d", struct.pack("<Q", struct.unpack("<Q", struct.pack("<d", x))[0] + 1))[0]
    assert enzyme_gradient(module, "through_int", [x])[1][0] == after


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
def test_variants_bit_identical(variant):
    def shadow(v):
        args = [X.copy(), np.zeros(5), 5, 1.0]
        return runner.run_function(compile_variant(SRC, "f", v), "f_grad", args).arguments[1]

    assert shadow(variant).tobytes() == shadow("enzyme").tobytes()
