// `double **a`, an array of rows as Enzyme users pass matrices: a dense two-dimensional
// `memref<?x?xf64>` (rows of one length, not aliasing one another), `a[i][j]` a 2-D
// access; its shadow `double **da` is one too. Pointers after an array dimension
// (`double *a[4]`) stay an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/pointer-array.c 2>&1 | filecheck %s --check-prefix=ERR
#include <enzyme/enzyme.h>

double frob(double **a, int n, int m) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s += a[i][j] * a[i][j];
  return s;
}

void grad(double **a, double **da, int n, int m) { __enzyme_autodiff((void *)frob, a, da, n, m); }

// CHECK: func.func @frob(%a: memref<?x?xf64> {{.*}}, %n: index {{.*}}, %m: index {{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK:   memref.load %a[%i, %j] : memref<?x?xf64>
// ERR:   error: {{.*}}pointer-array.c:1:18: unsupported C: pointers to pointers after an array dimension
