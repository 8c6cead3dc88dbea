// A local struct with pointer fields (Enzyme's blas_gemm2.c): its scalar fields are
// values as any local struct's; a pointer field is the buffer one malloc at the
// function's top level binds (`m.out = malloc(...)`), and `&m` passes it as the memref of
// that field of a struct pointer. A pointer field read before it is bound is an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/struct-field-unbound.c 2>&1 | filecheck %s --check-prefix=ERR
#include <stdlib.h>

struct Prod {
  double *out;
  double alpha;
};

void mul(struct Prod *p, const double *x, int n) {
  for (int i = 0; i < n; i++)
    p->out[i] = p->alpha * x[i] * x[i];
  p->alpha = 0.0;
}

double run(const double *x, int n) {
  struct Prod m;
  m.out = malloc(n * sizeof(double));
  m.alpha = 3.0;
  mul(&m, x, n);
  double r = m.out[n - 1] + m.alpha;
  free(m.out);
  return r;
}
// CHECK-LABEL: func.func @mul(%p: memref<?xf64> {{.*}}, %p_out: memref<?xf64> {{.*}}, %x: memref<?xf64> {{.*}}, %n: index
// CHECK-LABEL: func.func @run(
// CHECK:         %[[ALPHA:.*]] = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK:         %out = memref.alloc(%n) : memref<?xf64>
// CHECK:         func.call @mul(%[[ALPHA]], %out, %x, %n)
// CHECK:         memref.load %[[ALPHA]]
// CHECK:         memref.load %out
// ERR: error: {{.*}}struct-field-unbound.c:5:12: unsupported C: the pointer field 'm . out' before 's.p = malloc(...)' binds it
