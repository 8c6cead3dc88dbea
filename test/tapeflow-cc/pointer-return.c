// A pointer returned by a function of the file. Into a parameter (`return a + i*n`,
// also through a local view or another such call), the function returns the element
// offset (an index) and the caller keeps its own array: `row(a, i, n)[j]` is
// `a[off + j]`, so the AD sees the one array and its aliasing exactly; a view argument
// calls the variant `row_at0`, whose offset is absolute. A buffer the function mallocs is
// returned as that memref (a new array, aliasing nothing). What it points into is read
// from the C and checked when the return is translated; other returns are errors.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/return-local-array.c 2>&1 | filecheck %s --check-prefix=LOCAL
// RUN: not tapeflow-cc %S/Inputs/return-early-pointer.c 2>&1 | filecheck %s --check-prefix=EARLY
#include <stdlib.h>

double *row(double *a, int i, int n) { return a + i * n; }

double *squares(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++)
    t[i] = x[i] * x[i];
  return t;
}

double f(double *a, int m, int n) {
  double s = 0.0;
  for (int i = 0; i < m; i++) {
    double *r = row(a, i, n);
    s += r[1] * r[0];
  }
  double *q = squares(a, n);
  s += q[1] * row(a + 1, 1, n)[0];
  free(q);
  return s;
}

// CHECK:     func.func @row(%a: memref<?xf64> {{.*}}, %i: index {{.*}}, %n: index {{.*}}) -> index {
// CHECK-NEXT:  %[[OFF:.*]] = arith.muli %i, %n : index
// CHECK-NEXT:  func.return %[[OFF]] : index
// CHECK:     func.func @squares(%x: memref<?xf64> {{.*}}, %n: index {{.*}}) -> memref<?xf64> {
// CHECK:       %t = memref.alloc(%n) : memref<?xf64>
// CHECK:       func.return %t : memref<?xf64>
// CHECK:     func.func @f(
// CHECK:         %[[R:.*]] = func.call @row(%a, %i, %n) : (memref<?xf64>, index, index) -> index
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[R]], %{{.*}} : index
// CHECK-NEXT:    memref.load %a[%[[AT]]] : memref<?xf64>
// CHECK:       %[[Q:.*]] = func.call @squares(%a, %n) : (memref<?xf64>, index) -> memref<?xf64>
// CHECK-NEXT:  memref.load %[[Q]][%{{.*}}] : memref<?xf64>
// CHECK-NEXT:  %[[V:.*]] = func.call @row_at0(%a, %{{.*}}, %n, %{{.*}}) : (memref<?xf64>, index, index, index) -> index
// CHECK:       memref.load %a[%{{.*}}] : memref<?xf64>
// CHECK:       memref.dealloc %[[Q]] : memref<?xf64>
// CHECK:     func.func @row_at0(%a: memref<?xf64> {{.*}}, %i: index {{.*}}, %n: index {{.*}}, %a_offset: index {{.*}}) -> index {
// CHECK:       arith.addi %a_offset, %{{.*}} : index
// LOCAL:     error: {{.*}}return-local-array.c:1:55: unsupported C: returning a pointer to the local array 't'
// LOCAL-NOT: Traceback
// EARLY:     error: {{.*}}return-early-pointer.c:1:9: unsupported C: 'pick' returns a pointer other than by one 'return' at its end
// EARLY-NOT: Traceback
