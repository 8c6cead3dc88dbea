// A C kernel that returns nothing (its results are in *out, x is updated in place) is
// checked by the dot-product test: <J^T v, u> from reverse mode against <v, J u> from
// central differences; a gradient that is wrong (truncation to an integer has derivative
// zero for AD, steps for finite differences) fails it.
// REQUIRES: libclang
// RUN: tapeflow-check %s --entry norm_scale --args 0.5 | filecheck %s
// RUN: not tapeflow-check %s --entry stairs | filecheck %s --check-prefix=WRONG
// RUN: not tapeflow-check %s --entry inactive 2>&1 | filecheck %s --check-prefix=EMPTY
// CHECK: u over x[4], out[1], s; v over x[4], out[1]; step 1e-06
// CHECK: <v,Ju>: AD {{[-0-9.e]+}}  FD {{[-0-9.e]+}}  error {{[0-9.]+}}e-{{[0-9]+}}
// CHECK: ok: @norm_scale, the adjoint test, largest error {{.*}} (tolerance 1e-05)
// WRONG: FAILED: @stairs, the adjoint test
// EMPTY: error: @inactive has no active input (a float array not enzyme_const, a float scalar): its gradient is empty
// EMPTY-NOT: Traceback

#include <math.h>

void norm_scale(double x[4], double out[1], double s) {
  double n = 0.0;
  for (int i = 0; i < 4; i++)
    n += x[i] * x[i];
  for (int i = 0; i < 4; i++)
    x[i] = s * x[i] / sqrt(n);
  out[0] = sin(n);
}

void stairs(double x[1], double y[1]) { y[0] = (double)(long)(x[0] * 1e9); }

void inactive(int k[2]) { k[0] = k[1]; }

void __enzyme_autodiff(void *, ...);
void grads(double *x, double *dx, double *o, double *d_o, double *y, double *dy, int *k) {
  __enzyme_autodiff((void *)norm_scale, x, dx, o, d_o, 2.0);
  __enzyme_autodiff((void *)stairs, x, dx, y, dy);
  __enzyme_autodiff((void *)inactive, k, k);
}
