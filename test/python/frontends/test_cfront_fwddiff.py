"""Forward mode (issue 35 item 4): `tapeflow-fwdad`'s tangents of C functions against
central finite differences along a random direction, and against reverse mode: for
inputs' direction u and outputs' weights v, v . (J u) from `f_fwd` equals (J^T v) . u
from `f_grad` (the same derivative rules, run the other way). The functions cover loops
with carried values, branches, a while loop, local arrays, memcpy, a helper, in-place
updates, <math.h> and a CBLAS call."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.cfront import u

from tapeflow import runner
from tapeflow.registry import make_context

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

SRC = r"""
#include <math.h>
#include <string.h>
#include <cblas.h>

static double sq(double a) { return a * a; }

double mix(double *x, int n, double s) {
  double acc = 0.0, m = 0.0;
  for (int i = 0; i < n; i++) {
    double v = s * x[i];
    if (v > 0.0)
      acc += sq(v) * exp(-v);
    else
      acc += atan2(v, 1.0 + x[i] * x[i]);
    m = fmax(m, fabs(v));
  }
  int k = 0;
  double p = 1.0;
  while (p < 10.0 && k < 20) {
    p = p * (1.5 + 0.1 * m);
    k++;
  }
  return acc + pow(m + 1.0, 1.5) + p;
}

void layer(const double *W, double *x, double *out, int n) {
  double tmp[8];
  memcpy(tmp, x, n * sizeof(double));
  for (int i = 0; i < n; i++)
    tmp[i] = sin(tmp[i]) + tmp[i] * tmp[i];
  cblas_dgemv(CblasColMajor, CblasTrans, n, n, 1.0, W, n, tmp, 1, 0.0, out, 1);
  for (int i = 0; i < n; i++)
    x[i] = 0.5 * x[i] * out[i];
}
"""
N = 4


@pytest.fixture(scope="module")
def module():
    from tapeflow.frontends.c import compile_c
    from tapeflow.transforms.autodiff import AutodiffPass
    from tapeflow.transforms.fwdad import ForwardModePass

    m = compile_c(SRC, "test.c", functions=["mix", "layer"])
    ForwardModePass(functions=("mix", "layer")).apply(make_context(), m)
    AutodiffPass(functions=("mix", "layer")).apply(make_context(), m)
    return m


def _mix(module, x, s):
    return runner.run_function(module, "mix", [x.copy(), N, s]).results[0]


def _layer(module, W, x):
    """Both outputs of `layer`: out and the final x."""
    x, out = x.copy(), np.zeros(N)
    runner.run_function(module, "layer", [W.copy(), x, out, N])
    return np.concatenate([out, x])


X, S = np.array([0.7, -1.2, 0.4, 2.0]), 1.3
W = u(N * N, seed=3)
XL = u(N, seed=4)


def test_mix_tangent_is_finite_differences(module):
    dx, ds, eps = u(N, seed=1), 0.6, 1e-6
    got = runner.run_function(module, "mix_fwd", [X.copy(), dx.copy(), N, S, ds]).results[0]
    fd = (_mix(module, X + eps * dx, S + eps * ds) - _mix(module, X - eps * dx, S - eps * ds)) / (2 * eps)
    assert got == pytest.approx(fd, rel=1e-7)


def test_mix_forward_equals_reverse(module):
    """J u (forward) equals grad . u (reverse) for the scalar result."""
    dx, ds = u(N, seed=2), -0.4
    tangent = runner.run_function(module, "mix_fwd", [X.copy(), dx.copy(), N, S, ds]).results[0]
    gx = np.zeros(N)
    gs = runner.run_function(module, "mix_grad", [X.copy(), gx, N, S, 1.0]).results[0]
    assert tangent == pytest.approx(gx @ dx + gs * ds, rel=1e-13)


def _layer_fwd(module, dW, dx):
    """The tangents of (out, final x) along (dW, dx)."""
    x, dxx, out, dout = XL.copy(), dx.copy(), np.zeros(N), np.zeros(N)
    runner.run_function(module, "layer_fwd", [W.copy(), dW.copy(), x, dxx, out, dout, N])
    return np.concatenate([dout, dxx])


def test_layer_tangent_is_finite_differences(module):
    dW, dx, eps = u(N * N, seed=5), u(N, seed=6), 1e-6
    fd = (_layer(module, W + eps * dW, XL + eps * dx) - _layer(module, W - eps * dW, XL - eps * dx)) / (2 * eps)
    np.testing.assert_allclose(_layer_fwd(module, dW, dx), fd, rtol=1e-7, atol=1e-9)


def test_layer_forward_equals_reverse(module):
    """v . (J u) == (J^T v) . u over both outputs (out and x updated in place)."""
    dW, dx = u(N * N, seed=7), u(N, seed=8)
    v = u(2 * N, seed=9)
    gW, gx, gout = np.zeros(N * N), v[N:].copy(), v[:N].copy()
    runner.run_function(module, "layer_grad",
                        [W.copy(), gW, XL.copy(), gx, np.zeros(N), gout, N])
    assert v @ _layer_fwd(module, dW, dx) == pytest.approx(gW @ dW + gx @ dx, rel=1e-13)


def test_primal_unchanged(module):
    """`f_fwd` computes the primal on the way: the arrays' final contents are `f`'s."""
    x, out = XL.copy(), np.zeros(N)
    runner.run_function(module, "layer_fwd", [W.copy(), np.zeros(N * N), x, np.zeros(N), out,
                                              np.zeros(N), N])
    np.testing.assert_array_equal(np.concatenate([out, x]), _layer(module, W, XL))


def test_enzyme_calls_and_activities():
    """`__enzyme_fwddiff` with enzyme_const / enzyme_dup / enzyme_dupnoneed marks the
    specialization; its tangent is the forward derivative along the given seed only."""
    from tapeflow.frontends.c import compile_c
    from tapeflow.transforms.fwdad import ForwardModePass

    src = r"""
    void scale(const double *a, double *y, double t, int n) {
      for (int i = 0; i < n; i++) y[i] = a[i] * y[i] * t;
    }
    int main(void) {
      double a[2] = {2.0, 3.0}, da[2], y[2] = {1.0, 1.0}, dy[2] = {1.0, 0.0};
      __enzyme_fwddiff((void *)scale, enzyme_const, a, enzyme_dupnoneed, y, dy,
                       enzyme_const, 1.5, 2);
      __enzyme_fwddiff((void *)scale, a, da, y, dy, 1.5, 1.0, 2);
    }"""
    m = compile_c(src, "test.c")
    ForwardModePass().apply(make_context(), m)
    a, y = np.array([2.0, 3.0]), np.array([1.0, -1.0])
    dy = np.array([1.0, 0.5])
    runner.run_function(m, "scale_cdcc_fwd", [a.copy(), y.copy(), dy, 1.5, 2])
    np.testing.assert_allclose(dy, a * np.array([1.0, 0.5]) * 1.5)
    da, dy, dt = np.array([0.5, -1.0]), np.array([1.0, 0.5]), 2.0
    runner.run_function(m, "scale_fwd", [a.copy(), da, y.copy(), dy, 1.5, dt, 2])
    want = np.array([0.5, -1.0]) * y * 1.5 + a * np.array([1.0, 0.5]) * 1.5 + a * y * dt
    np.testing.assert_allclose(dy, want)


def test_variants_leave_forward_alone():
    """The TapeFlow variants' passes see no tape in `f_fwd`: its tangents are the same bits
    after the `tapeflow` pipeline as straight out of the pass."""
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.frontends.c import compile_c
    from tapeflow.machines import pipeline
    from tapeflow.transforms.fwdad import ForwardModePass

    def tangent(variant):
        m = compile_c(SRC, "test.c", functions=["layer"])
        ForwardModePass(functions=("layer",)).apply(make_context(), m)
        for p in pipeline(variant, tapeflow_options(2048, 0, 2, mode="always")):
            p.apply(make_context(), m)
        return _layer_fwd(m, u(N * N, seed=10), u(N, seed=11)).tobytes()

    assert tangent("tapeflow") == tangent("enzyme") == tangent("regions")


@pytest.mark.parametrize("order", ["reverse-first", "forward-first"])
def test_one_specialization_for_both_modes(order):
    """`__enzyme_autodiff` and `__enzyme_fwddiff` with one activity share `f_dcc`; each pass
    adds its one function, whichever runs first (a gradient is not differentiated again)."""
    from xdsl.dialects import func

    from tapeflow.frontends.c import compile_c
    from tapeflow.transforms.autodiff import AutodiffPass
    from tapeflow.transforms.fwdad import ForwardModePass

    src = r"""
    double f(double *x, const double *w, int n) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += w[i] * x[i] * x[i];
      return s;
    }
    int main(void) {
      double x[2], dx[2], w[2];
      __enzyme_autodiff((void *)f, x, dx, enzyme_const, w, 2);
      __enzyme_fwddiff((void *)f, x, dx, enzyme_const, w, 2);
    }"""
    m = compile_c(src, "test.c")
    passes = [AutodiffPass(), ForwardModePass()]
    for p in passes if order == "reverse-first" else passes[::-1]:
        p.apply(make_context(), m)
    names = {f.sym_name.data for f in m.ops if isinstance(f, func.FuncOp)}
    assert names == {"f", "f_dcc", "f_dcc_grad", "f_dcc_fwd"}
    x, w, dx = np.array([0.5, -2.0]), np.array([3.0, 0.25]), np.array([1.0, 2.0])
    tangent = runner.run_function(m, "f_dcc_fwd", [x.copy(), dx.copy(), w.copy(), 2]).results[0]
    grad = np.zeros(2)
    runner.run_function(m, "f_dcc_grad", [x.copy(), grad, w.copy(), 2, 1.0])
    np.testing.assert_allclose(grad, 2 * w * x)
    assert tangent == pytest.approx(grad @ dx, rel=1e-15)
