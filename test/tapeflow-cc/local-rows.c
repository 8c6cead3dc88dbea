// A local `double **` built from mallocs, as Enzyme's users build matrices:
// `double **m = malloc(n * sizeof(double *)); for (...) m[i] = malloc(k * sizeof(double));`
// is one dense `memref<?x?xf64>` allocated where `m` is declared (as `double **`
// parameters are), so `m[i][j]` is a 2-D access and `m` passes to a `double **`
// parameter; the row mallocs and `free(m[i])` do nothing, `free(m)` frees it; calloc'ed
// rows are zero-filled. Every row has one length, known where `m` is declared: rows of
// different lengths, or a length computed later, are refused at the row's line.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/rows-triangular.c 2>&1 | filecheck %s --check-prefix=TRI
// RUN: not tapeflow-cc %S/Inputs/rows-two-lengths.c 2>&1 | filecheck %s --check-prefix=TWO
#include <stdlib.h>

double frob(double **a, int n, int k) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < k; j++)
      s += a[i][j] * a[i][j];
  return s;
}

double f(double *x, int n, int k) {
  double **m = (double **)malloc(n * sizeof(double *));
  for (int i = 0; i < n; i++)
    m[i] = (double *)malloc(k * sizeof(double));
  double **z = calloc(n, sizeof(double *));
  for (int i = 0; i < n; i++)
    z[i] = calloc(k, sizeof(double));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < k; j++)
      m[i][j] = x[i * k + j] + z[i][j];
  double s = frob(m, n, k);
  for (int i = 0; i < n; i++) {
    free(m[i]);
    free(z[i]);
  }
  free(m);
  free(z);
  return s;
}

// CHECK:     func.func @f(
// CHECK:       %m = memref.alloc(%n, %k) : memref<?x?xf64>
// CHECK:       %z = memref.alloc(%n, %k) : memref<?x?xf64>
// CHECK-NEXT:  scf.for %[[R:.*]] = %{{.*}} to %n step %{{.*}} {
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %k step %{{.*}} {
// CHECK-NEXT:      memref.store %{{.*}}, %z[%[[R]], %[[C]]] : memref<?x?xf64>
// CHECK:         memref.load %z[%{{.*}}, %j] : memref<?x?xf64>
// CHECK:         memref.store %{{.*}}, %m[%{{.*}}, %j] : memref<?x?xf64>
// CHECK:       func.call @frob(%m, %n, %k) : (memref<?x?xf64>, index, index) -> f64
// CHECK-NEXT:  scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} {
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.dealloc %m : memref<?x?xf64>
// CHECK-NEXT:  memref.dealloc %z : memref<?x?xf64>
// TRI:       error: {{.*}}rows-triangular.c:5:12: unsupported C: a row length of 'm' that depends on 'i' (a local 'T **' is a dense 2-D array: every row one length, known where it is declared)
// TRI-NOT:   Traceback
// TWO:       error: {{.*}}rows-two-lengths.c:5:10: unsupported C: rows of 'm' of different lengths (a local 'T **' is a dense 2-D array: every row one length)
// TWO-NOT:   Traceback
