"""Enzyme's checkpointed and fixed-point loops in C (issue 35): each entry point is the
loop of step calls it stands for, so its gradient is that loop's, against central
differences, bit for bit the plain loop's, and the same through every TapeFlow variant."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")

from helpers.cfront import check_fd, compile_and_differentiate, gradient_bits, u

LOOPS = """
#include <enzyme/checkpoint.h>
#include <enzyme/fixed_point.h>
#include <math.h>
#define N 4
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

static double glob[N];  /* written by every step, as checkpoint_for.c's */

static void step(int64_t i, double *u) {
  double tmp[N];
  for (int k = 0; k < N; k++)
    tmp[k] = u[k] + 0.1 * (u[(k + 1) % N] - u[k]) + 0.01 * sin(glob[k] + 0.1 * (double)i);
  for (int k = 0; k < N; k++) {
    glob[k] = 0.9 * glob[k] + 0.1 * tmp[k] * tmp[k];
    u[k] = tmp[k];
  }
}

static double loss(const double *u) {
  double s = 0;
  for (int k = 0; k < N; k++)
    s += u[k] * u[k] + glob[k];
  return s;
}

double plain(double *u, long n) {
  for (int64_t i = 3; i < 3 + n; i++)
    step(i, u);
  return loss(u);
}

double ckpt(double *u, long n, const EnzymeCheckpointScheme *scheme, EnzymeCkptConfig *c) {
  __enzyme_checkpoint_for((void *)step, 3, n, enzyme_scheme, scheme, c,
                          enzyme_checkpoint_region, u, (int64_t)(N * sizeof(double)), u);
  return loss(u);
}

/* A fixed point u = 0.3 cos(u + p) + p, to the tolerance *tol. */
static int iterate(int64_t i, double *u, double *p, double *tol) {
  double err = 0;
  for (int k = 0; k < N; k++) {
    double t = 0.3 * cos(u[k] + 0.5 * u[(k + 1) % N]) + p[k] * p[k];
    err = fmax(err, fabs(t - u[k]));
    u[k] = t;
  }
  return err > *tol;
}

double fp_plain(double *u, double *p, double *tol) {
  int64_t i = 0;
  while (iterate(i++, u, p, tol))
    ;
  return u[0] * u[1] + u[2] * u[3];
}

double fp(double *u, double *p, double *tol) {
  __enzyme_fixed_point((void *)iterate, enzyme_fp_state, u, (int64_t)(N * sizeof(double)),
                       enzyme_fp_reduction, 1e-30, u, p, tol);
  return u[0] * u[1] + u[2] * u[3];
}

double fp_while(double *u, double *p, double *tol) {
  __enzyme_checkpoint_while((void *)iterate, enzyme_scheme, &EnzymeCkptStoreAll, (void *)0,
                            u, p, tol);
  return u[0] * u[1] + u[2] * u[3];
}

double fp_marked(double *u, double *p, double *tol) {
  double err = 1;
  while (err > 0) {
    __enzyme_set_fixed_point(1e-30, (int64_t)-1, (void *)0, u, (int64_t)sizeof(double) * N);
    err = iterate(0, u, p, tol) ? 1 : 0;
  }
  return u[0] * u[1] + u[2] * u[3];
}

/* Two levels, as checkpoint_nested.c: a struct holding a configuration pointer (no
   memref: only the integers are passed) and a checkpointed loop inside a step. */
typedef struct {
  int64_t inner;
  EnzymeCkptConfig *inner_config;
} Levels;

static void segment(int64_t k, double *u, Levels *levels) {
  __enzyme_checkpoint_for((void *)step, 3 + k * levels->inner, levels->inner, enzyme_scheme,
                          &EnzymeCkptPeriodic, levels->inner_config, u);
}

double two_level(double *u, long outer, Levels *levels) {
  __enzyme_checkpoint_for((void *)segment, 0, outer, u, levels);
  return loss(u);
}

void drive(double *u, double *du, double *p, double *dp, double *tol, long n,
           EnzymeCkptConfig *c, Levels *levels) {
  __enzyme_autodiff((void *)two_level, enzyme_dup, u, du, enzyme_const, n, enzyme_const, levels);
  __enzyme_autodiff((void *)plain, enzyme_dup, u, du, enzyme_const, n);
  __enzyme_autodiff((void *)ckpt, enzyme_dup, u, du, enzyme_const, n, enzyme_const,
                    &EnzymeCkptRevolve, enzyme_const, c);
  __enzyme_autodiff((void *)fp_plain, enzyme_dup, u, du, enzyme_dup, p, dp, enzyme_const, tol);
  __enzyme_autodiff((void *)fp, enzyme_dup, u, du, enzyme_dup, p, dp, enzyme_const, tol);
  __enzyme_autodiff((void *)fp_while, enzyme_dup, u, du, enzyme_dup, p, dp, enzyme_const, tol);
  __enzyme_autodiff((void *)fp_marked, enzyme_dup, u, du, enzyme_dup, p, dp, enzyme_const, tol);
}
"""


@pytest.fixture(scope="module")
def module():
    return compile_and_differentiate(LOOPS)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_checkpoint_for_is_the_loop(module, n):
    """The checkpointed loop's gradient is the finite difference and the plain loop's,
    bit for bit (the scheme and configuration are no arguments: `ckpt` takes u and n)."""
    args = [u(4) + 1.5, n]
    ckpt, _ = check_fd(module, "ckpt", args)
    plain, _ = check_fd(module, "plain", args)
    assert set(ckpt) == {0}
    assert np.array_equal(ckpt[0], plain[0])


@pytest.mark.parametrize(("outer", "inner"), [(1, 1), (3, 4)])
def test_nested_checkpoints_are_the_loop(module, outer, inner):
    """A checkpointed loop of checkpointed segments is the plain loop of outer * inner
    steps; the struct's configuration pointer is no argument (`levels` is its integers)."""
    x = u(4) + 1.5
    nested, _ = check_fd(module, "two_level_dcc", [x, outer, np.array([inner], np.int64)])
    plain, _ = check_fd(module, "plain", [x, outer * inner])
    assert np.array_equal(nested[0], plain[0])


@pytest.mark.parametrize("name", ["fp", "fp_while", "fp_marked"])
@pytest.mark.parametrize("tol", [1e-15, 1e-2])
def test_fixed_point_is_every_iteration(module, name, tol):
    """A fixed-point loop (or one checkpointed until its step says stop) is
    differentiated through every iteration: the finite difference of the loop as it ran,
    converged (1e-15) or stopped early (1e-2), and the plain loop's gradient, bit for bit."""
    args = [u(4, seed=1) * 0.1, u(4, seed=2) * 0.3 + 0.5, np.array([tol])]
    got, _ = check_fd(module, f"{name}_ddc", args)
    want, _ = check_fd(module, "fp_plain_ddc", args)
    assert set(got) == {0, 1}
    for p in got:
        assert np.array_equal(got[p], want[p])


@pytest.mark.parametrize("variant", ["regions", "tapeflow"])
def test_checkpointed_gradient_same_in_every_variant(variant):
    """The checkpointed loop through TapeFlow's variants: the Enzyme layout's bits."""
    call = [u(4) + 1.5, np.zeros(4), 20, 1.0]
    want = gradient_bits(LOOPS, "ckpt", call, "enzyme")
    assert gradient_bits(LOOPS, "ckpt", call, variant) == want
