// memcpy/memmove of arrays and memset(p, 0, ...) (Enzyme users copy inputs into a work
// buffer and clear accumulators): an element loop of loads and stores, counted as
// malloc sizes are (a product with sizeof); views give their offsets.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
#include <string.h>

double f(const double *x, int n) {
  double work[8];
  double acc[4];
  memcpy(work, x, n * sizeof(double));
  memset(acc, 0, sizeof(acc));
  memcpy(work + 4, x, 4 * sizeof(double));
  for (int i = 0; i < 4; i++)
    acc[i] += work[i] * work[i + 4];
  return acc[0] + acc[3];
}

// CHECK:      scf.for %[[I:.*]] = %{{.*}} to %n step
// CHECK-NEXT:   %[[V:.*]] = memref.load %x[%[[I]]] : memref<?xf64>
// CHECK-NEXT:   memref.store %[[V]], %work[%[[I]]] : memref<8xf64>
// CHECK:      scf.for %[[J:.*]] =
// CHECK-NEXT:   memref.store %{{.*}}, %acc[%[[J]]] : memref<4xf64>
// CHECK:      scf.for %[[K:.*]] =
// CHECK-NEXT:   %[[W:.*]] = memref.load %x[%[[K]]] : memref<?xf64>
// CHECK-NEXT:   %[[AT:.*]] = arith.addi %{{.*}}, %[[K]] : index
// CHECK-NEXT:   memref.store %[[W]], %work[%[[AT]]] : memref<8xf64>
