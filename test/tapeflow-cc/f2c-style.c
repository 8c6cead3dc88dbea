// What f2c's BLAS (Enzyme's blas_inline.h) takes: a scalar local whose address a pointer
// holds lives in a one-element stack cell, read and written there by its name and the
// pointer; a string literal as a `char *` argument is a stack array of its bytes (both
// allocated once, in the entry block); `&x`
// passed twice to one call is one cell when both parameters point to const; a static
// local that is never named is nothing; `&enzyme_const` is the marker. `&x` passed twice
// to a writable pointer stays an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/address-twice.c 2>&1 | filecheck %s --check-prefix=ERR
#include <enzyme/enzyme.h>

int same(const char *a, const char *b) {
  static char unused[] = "never read";
  return *(unsigned char *)a == *(unsigned char *)b;
}

double scale(const char *flag, const double *alpha, const double *beta, double x) {
  char f = *flag;
  char *fp = &f;
  double t = x;
  double *tp = &t;
  *tp = *tp * 3.0;
  if (same(fp, "N"))
    return t * *alpha;
  return t * *beta;
}
// CHECK-LABEL: func.func @scale(
// CHECK:         %f = memref.alloca() : memref<1xi8>
// CHECK:         %t = memref.alloca() : memref<1xf64>
// CHECK:         %[[S:.*]] = memref.alloca() : memref<2xi8>
// CHECK:         memref.store %x, %t[%{{.*}}] : memref<1xf64>
// CHECK:         memref.store %{{.*}}, %[[S]][%{{.*}}] : memref<2xi8>

double run(double x, char c) {
  double one = 1.0;
  return scale(&c, &one, &one, x);
}

void grad(double x, char c) { __enzyme_autodiff((void *)run, x, &enzyme_const, c); }
// CHECK-LABEL: func.func @run(%x: f64 {{.*}}, %c: index {{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK:         %[[ONE:.*]] = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK:         func.call @scale(%{{.*}}, %[[ONE]], %[[ONE]], %x)
// ERR: error: {{.*}}address-twice.c:4:11: unsupported C: '&x' passed twice to one call (they would alias)
