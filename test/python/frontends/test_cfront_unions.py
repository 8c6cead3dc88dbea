"""Local unions of same-size scalars (issue 35 item 6): the bits read through another
field are the C program's, the gradient through the float view is the finite
differences', and a value written through the integer view carries no derivative."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from helpers.cfront import check_fd, compile_and_differentiate, enzyme_gradient

from tapeflow import runner

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

SRC = """
#include <stdint.h>
union bits { double d; uint64_t u; };

double f(double *x, int n) {
  union bits v;
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    v.d = x[i] * x[i];
    uint64_t exponent = (v.u >> 52) & 2047;
    s += v.d * (double)exponent;
  }
  return s + v.d;
}

double through_int(double x) {
  union bits v;
  v.d = x;
  v.u = v.u + 1;
  return v.d * x;
}

float next_one(float a) {
  union { int32_t k; float f; } w = {1065353216};
  w.k += 1;
  return w.f * a;
}
"""
X = np.array([0.7, -2.3, 5.5, 11.0, -0.4])


@pytest.fixture(scope="module")
def module():
    return compile_and_differentiate(SRC, functions=["f", "through_int", "next_one"])


def test_values_are_the_bits_reinterpreted(module):
    exponents = [(struct.unpack("<Q", struct.pack("<d", x * x))[0] >> 52) & 2047 for x in X]
    want = sum(x * x * e for x, e in zip(X, exponents)) + X[-1] ** 2
    assert runner.run_function(module, "f", [X.copy(), 5]).results[0] == want
    one_up = struct.unpack("<f", struct.pack("<i", 1065353217))[0]
    assert runner.run_function(module, "next_one", [2.0]).results[0] == one_up * 2.0
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
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.frontends.c import compile_c
    from tapeflow.machines import pipeline
    from tapeflow.registry import make_context

    def shadow(v):
        m = compile_c(SRC, "u.c", functions=["f"])
        for p in pipeline(v, tapeflow_options(2048, 0, 2, mode="always")):
            p.apply(make_context(), m)
        return runner.run_function(m, "f_grad", [X.copy(), np.zeros(5), 5, 1.0]).arguments[1].tobytes()

    assert shadow(variant) == shadow("enzyme")
