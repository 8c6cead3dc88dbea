// malloc(n * sizeof(T)) is memref.alloc with a dynamic size, free is memref.dealloc;
// calloc also zero-fills (the interpreter's alloc zeroes, native memory does not).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/malloc-bytes.c 2>&1 | filecheck %s --check-prefix=ERR
#include <stdlib.h>

double f(const double *x, int n) {
  double *t = (double *)malloc(n * sizeof(double));
  double *z = calloc(n, sizeof(double));
  for (int i = 0; i < n; i++)
    t[i] = x[i] * x[i] + z[i];
  double s = t[n - 1];
  free(t);
  free(z);
  return s;
}

// ERR: error: {{.*}}malloc-bytes.c:3:22: unsupported C: malloc of 20 bytes: not a multiple of the element size 8

// Constants are hoisted to the entry block:
// CHECK:      %[[ZERO:[a-zA-Z0-9_]+]] = arith.constant 0.000000e+00 : f64
// CHECK:      %t = memref.alloc(%n) : memref<?xf64>
// CHECK-NEXT: %z = memref.alloc(%n) : memref<?xf64>
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} {
// CHECK-NEXT:   memref.store %[[ZERO]], %z[%{{.*}}] : memref<?xf64>
// CHECK:      memref.dealloc %t : memref<?xf64>
// CHECK-NEXT: memref.dealloc %z : memref<?xf64>
