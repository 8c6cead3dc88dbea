// Enzyme's defaults, as its users write them: the header included, arguments without
// annotations. An unannotated pointer is enzyme_dup (its shadow is the next argument), an
// unannotated float scalar is active, an integer constant: the primal's own `f_grad`.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
#include <enzyme/enzyme.h>
#include <stdio.h>

double f(double *x, int n, double s) {
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += x[i] * x[i] * s;
  return r;
}

int main(void) {
  double x[2] = {1, 2}, dx[2] = {0};
  double ds = __enzyme_autodiff((void *)f, x, dx, 2, 3.0);
  printf("%f %f %f\n", dx[0], dx[1], ds);
  return 0;
}

// CHECK:     func.func @f(%x: memref<?xf64> {{.*}}, %n: index {{.*}}, %s: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff} {
// CHECK-NOT: func.func
// GRAD:      func.func @f_grad(%x: memref<?xf64>, %d_x: memref<?xf64>, %n: index, %s: f64, %seed: f64) -> f64
