// `void *` as Enzyme's users write it: `void *p = malloc(...)` then `(double *)p` (or
// `double *x = p`), casts of float/int buffers to and from `void *`, a `void *`
// parameter the callee converts. A `void *` has the element type of the typed pointers
// the function converts it to (one type: the memory is typed memref elements), so
// `void *mem = malloc(n * sizeof(double))` is a `memref<?xf64>` and `(double *)mem` that
// same memref. Two element types for one `void *`, or a typed pointer reading a buffer
// of another element type (a cast that reinterprets memory), are errors.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/void-two-types.c 2>&1 | filecheck %s --check-prefix=TWO
// RUN: not tapeflow-cc %S/Inputs/void-reinterpret.c 2>&1 | filecheck %s --check-prefix=PUN
#include <stdlib.h>

static void scale(void *p, int n, double k) {
  double *x = (double *)p;
  for (int i = 0; i < n; i++)
    x[i] *= k;
}

double f(double *x, int *idx, int n) {
  void *mem = malloc(n * sizeof(double));
  double *t = (double *)mem;
  void *vi = idx;
  int *j = (int *)vi;
  for (int i = 0; i < n; i++)
    t[i] = x[j[i]];
  scale((void *)t, n, 3.0);
  void *v = x;
  double *y = v;
  double s = t[0] * y[1];
  free(mem);
  return s;
}

// CHECK:     func.func @scale(%p: memref<?xf64> {{.*}}, %n: index {{.*}}, %k: f64 {{.*}}) {
// CHECK:         memref.store %{{.*}}, %p[%i] : memref<?xf64>
// CHECK:     func.func @f(%x: memref<?xf64> {{.*}}, %idx: memref<?xi32> {{.*}}, %n: index {{.*}}) -> f64 {
// CHECK:       %mem = memref.alloc(%n) : memref<?xf64>
// CHECK:         memref.load %idx[%i] : memref<?xi32>
// CHECK:         memref.store %{{.*}}, %mem[%i] : memref<?xf64>
// CHECK:       func.call @scale(%mem, %n, %{{.*}}) : (memref<?xf64>, index, f64) -> ()
// CHECK:       memref.load %mem[%{{.*}}] : memref<?xf64>
// CHECK:       memref.load %x[%{{.*}}] : memref<?xf64>
// CHECK:       memref.dealloc %mem : memref<?xf64>
// TWO:       error: {{.*}}void-two-types.c:3:9: unsupported C: the void * 'p' is converted to pointers of different element types (double, float)
// TWO-NOT:   Traceback
// PUN:       error: {{.*}}void-reinterpret.c:3:14: unsupported C: 'f' reads a buffer of 'double' as 'float' (a cast that reinterprets memory)
// PUN-NOT:   Traceback
