// A malloc/calloc size is a product with sizeof(element) anywhere in it, as C written
// for Enzyme has it (issue 23: `malloc(sizeof(double) * 2 * N)` was refused while
// `2 * N * sizeof(double)` was accepted): the count is the other factors' product.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
#include <stdlib.h>

double f(const double *x, int n) {
  double *a = malloc(sizeof(double) * 2 * n);
  double *b = (double *)malloc(2 * sizeof(double) * n);
  double *c = calloc(sizeof(double), n);
  for (int i = 0; i < n; i++) {
    a[2 * i] = x[i];
    a[2 * i + 1] = x[i] * x[i];
    b[i] = a[2 * i + 1] + c[i];
  }
  double s = b[n - 1];
  free(a);
  free(b);
  free(c);
  return s;
}

// CHECK:      %[[TWO:.*]] = arith.constant 2 : index
// CHECK:      %[[A:.*]] = arith.muli %[[TWO]], %n : index
// CHECK-NEXT: memref.alloc(%[[A]]) : memref<?xf64>
// CHECK:      %[[B:.*]] = arith.muli %[[TWO]], %n : index
// CHECK-NEXT: memref.alloc(%[[B]]) : memref<?xf64>
// CHECK:      memref.alloc(%n) : memref<?xf64>
