// memmove within one array (here a shift right by one, `memmove(x + 1, x, ...)`, which
// overlaps) copies as if through a temporary, as C says: two element loops through a
// buffer of the count, freed after. Before, it was one forward loop, which for this shift
// copied x[0] into every element: a wrong primal and a wrong gradient, silently. A
// memmove between different arrays (no overlap: distinct pointers do not alias) stays
// one loop.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
#include <string.h>

double f(double *x, double *y, int n) {
  memmove(x + 1, x, (n - 1) * sizeof(double));
  memmove(y, x, n * sizeof(double));
  return x[n - 1] * y[0];
}

// CHECK:      func.func @f(
// CHECK:        %[[T:.*]] = memref.alloc(%[[C:.*]]) : memref<?xf64>
// CHECK-NEXT:   scf.for %[[I:.*]] = %{{.*}} to %[[C]] step
// CHECK-NEXT:     %[[V:.*]] = memref.load %x[%[[I]]] : memref<?xf64>
// CHECK-NEXT:     memref.store %[[V]], %[[T]][%[[I]]] : memref<?xf64>
// CHECK:        scf.for %[[J:.*]] = %{{.*}} to %[[C]] step
// CHECK-NEXT:     %[[W:.*]] = memref.load %[[T]][%[[J]]] : memref<?xf64>
// CHECK-NEXT:     %[[AT:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK-NEXT:     memref.store %[[W]], %x[%[[AT]]] : memref<?xf64>
// CHECK:        memref.dealloc %[[T]] : memref<?xf64>
// CHECK-NEXT:   scf.for %[[K:.*]] = %{{.*}} to %n step
// CHECK-NEXT:     %[[U:.*]] = memref.load %x[%[[K]]] : memref<?xf64>
// CHECK-NEXT:     memref.store %[[U]], %y[%[[K]]] : memref<?xf64>
// CHECK-NOT:    memref.alloc
// CHECK:        func.return
