// enzyme_const on a pointer or a float scalar, enzyme_dupnoneed, enzyme_out, and several
// __enzyme_autodiff calls of one function: one gradient per distinct activity signature.
// The signature of TapeFlow's convention (float arrays dup, float scalars active) marks
// the primal itself (`f_grad`); any other gets a specialization `f_<letters>`, one letter
// per parameter (d: dup or dupnoneed, c: const, a: active), that calls `f` and marks its
// constant float arguments `tapeflow.const`; its gradient `f_<letters>_grad` has no
// shadow and no gradient for them, as Enzyme's. A repeated signature adds nothing.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
#include <enzyme/enzyme.h>

double f(double *x, double *w, int n, double s) {
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += x[i] * w[i] * s;
  return r;
}

void drive(double *x, double *dx, double *w, double *dw, double s) {
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dupnoneed, w, dw, 4, enzyme_out, s);
  __enzyme_autodiff((void *)f, x, dx, enzyme_const, w, 4, enzyme_const, s);
  __enzyme_autodiff((void *)f, enzyme_const, x, w, dw, 4, s);
  __enzyme_autodiff((void *)f, x, dx, enzyme_const, w, 4, enzyme_const, s);
}

// CHECK:      func.func @f({{.*}}) -> f64 attributes {tapeflow.autodiff} {
// CHECK:      func.func @f_dccc(%x: memref<?xf64> loc({{.*}}), %w: memref<?xf64> {tapeflow.const} loc({{.*}}), %n: index loc({{.*}}), %s: f64 {tapeflow.const} loc({{.*}})) -> f64 attributes {tapeflow.autodiff} {
// CHECK-NEXT:   %0 = func.call @f(%x, %w, %n, %s) : (memref<?xf64>, memref<?xf64>, index, f64) -> f64 loc("{{.*}}enzyme-activities.c":22:3)
// CHECK:      func.func @f_cdca(%x: memref<?xf64> {tapeflow.const} loc({{.*}}), %w: memref<?xf64> loc({{.*}}), %n: index loc({{.*}}), %s: f64 loc({{.*}}))
// CHECK-NOT:  func.func
// GRAD:       func.func @f_grad(%x: memref<?xf64>, %d_x: memref<?xf64>, %w: memref<?xf64>, %d_w: memref<?xf64>, %n: index, %s: f64, %seed: f64) -> f64
// GRAD:       func.func @f_dccc_grad(%x: memref<?xf64>, %d_x: memref<?xf64>, %w: memref<?xf64>, %n: index, %s: f64, %seed: f64) {
// GRAD:       func.func @f_cdca_grad(%x: memref<?xf64>, %w: memref<?xf64>, %d_w: memref<?xf64>, %n: index, %s: f64, %seed: f64) -> f64
