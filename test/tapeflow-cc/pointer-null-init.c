// A pointer local initialized to a null pointer constant (`= NULL`, `= 0`, `= (T *)0`),
// as Enzyme's users write before allocating it, is a pointer declared without an
// initializer: it points nowhere until `p = malloc(...)` (or a view `p = x + 1`) binds
// it. Before, `double *b = NULL;` was "unsupported C: this pointer initializer".
// Reading it before it is bound stays a located error.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/pointer-null-read.c 2>&1 | filecheck %s --check-prefix=READ
#include <stdlib.h>

double f(double *x, int n) {
  double *b = NULL;
  double *c = (double *)0;
  void *v = 0;
  b = malloc(n * sizeof(double));
  c = x + 1;
  v = malloc(n * sizeof(double));
  double *t = v;
  for (int i = 0; i < n; i++) {
    b[i] = x[i] * c[0];
    t[i] = b[i];
  }
  double r = t[n - 1];
  free(b);
  free(v);
  return r;
}

// CHECK:     func.func @f(
// CHECK:       %b = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:       %v = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:       scf.for
// CHECK:         memref.load %x[%i]
// CHECK-NEXT:    arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    memref.load %x[
// READ:      error: {{.*}}pointer-null-read.c:3:17: unsupported C: 'b' as an array
// READ-NOT:  Traceback
