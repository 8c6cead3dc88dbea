// A file written for Enzyme, header include removed: the __enzyme_autodiff call marks
// `f` with tapeflow.autodiff (the enzyme_* declarations are supplied), its annotations
// match the convention, and only `f` is translated (main and printf are left alone).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
#include <stdio.h>

double f(double *x, const int *idx, int n, double s) {
  double r = 0.0;
  for (int i = 0; i < n; i++)
    r += x[idx[i]] * s;
  return r;
}

int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0};
  int idx[3] = {2, 1, 0};
  double ds = __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, idx, 3, 0.5);
  printf("%f %f\n", dx[0], ds);
  return 0;
}

// CHECK:     func.func @f(%x: memref<?xf64> {{.*}}, %idx: memref<?xi32> {{.*}}, %n: index {{.*}}, %s: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff} {
// CHECK-NOT: @main
// GRAD:      func.func @f_grad(%{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xi32>, %{{.*}}: index, %{{.*}}: f64, %{{.*}}: f64) -> f64
