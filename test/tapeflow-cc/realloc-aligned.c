// `realloc` and the aligned allocators. `p = realloc(p, size)` (or `q = realloc(p, ...)`)
// has C's copy semantics: a new `memref.alloc`, the elements both sizes hold copied
// (`min(dim(old), count)`), the old buffer freed, and `p` names the new one from there
// on; a buffer bound in a loop or branch would not outlive it, so realloc is at the
// function's top level, of a buffer the function allocates. `aligned_alloc(a, size)` and
// `posix_memalign(&p, a, size)` are `memref.alloc` (alignment is the memory's concern;
// posix_memalign returns 0). `double *p; p = malloc(...)` binds `p` the same way.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/realloc-loop.c 2>&1 | filecheck %s --check-prefix=LOOP
// RUN: not tapeflow-cc %S/Inputs/realloc-param.c 2>&1 | filecheck %s --check-prefix=PARAM
#include <stdlib.h>

double f(const double *x, int n) {
  double *g = aligned_alloc(64, n * sizeof(double));
  double *h;
  int err = posix_memalign((void **)&h, 64, n * sizeof(double));
  double *z;
  z = malloc(2 * sizeof(double));
  for (int i = 0; i < n; i++) {
    g[i] = x[i] * x[i];
    h[i] = x[i];
  }
  g = realloc(g, 2 * n * sizeof(double));
  for (int i = n; i < 2 * n; i++)
    g[i] = h[i - n];
  z[0] = g[2 * n - 1];
  double s = z[0] + err;
  free(g);
  free(h);
  free(z);
  return s;
}

// CHECK:     func.func @f(
// CHECK:       %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:       %g = memref.alloc(%n) : memref<?xf64>
// CHECK-NEXT:  %h = memref.alloc(%n) : memref<?xf64>
// CHECK-NEXT:  %z = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:       %[[COUNT:.*]] = arith.muli %{{.*}}, %n : index
// CHECK-NEXT:  %[[NEW:.*]] = memref.alloc(%[[COUNT]]) : memref<?xf64>
// CHECK-NEXT:  %[[OLD:.*]] = memref.dim %g, %[[ZERO]] : memref<?xf64>
// CHECK-NEXT:  %[[KEPT:.*]] = arith.minsi %[[OLD]], %[[COUNT]] : index
// CHECK-NEXT:  scf.for %[[K:.*]] = %[[ZERO]] to %[[KEPT]] step %{{.*}} {
// CHECK-NEXT:    %[[V:.*]] = memref.load %g[%[[K]]] : memref<?xf64>
// CHECK-NEXT:    memref.store %[[V]], %[[NEW]][%[[K]]] : memref<?xf64>
// CHECK:       memref.dealloc %g : memref<?xf64>
// CHECK:       memref.store %{{.*}}, %[[NEW]][%{{.*}}] : memref<?xf64>
// CHECK:       memref.dealloc %[[NEW]] : memref<?xf64>
// LOOP:      error: {{.*}}realloc-loop.c:8:22: unsupported C: the size of an allocation of 'p' in a loop depends on what the loop computes (only its counter)
// LOOP-NOT:  Traceback
// PARAM:     error: {{.*}}realloc-param.c:3:23: unsupported C: realloc of a buffer that this function does not allocate
// PARAM-NOT: Traceback
