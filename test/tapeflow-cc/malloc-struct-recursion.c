// A pointer to one malloc'ed struct with a pointer field, passed to a recursive function
// (Enzyme's mixedstruct1-simple.c): `T *p = malloc(sizeof(T))` is a local struct whose
// fields the assignments at the top level of its block bind, `g(p)` passes it as `g(&s)`
// and `free(p)` frees nothing. The gradient's bits are the same interpreted after
// tapeflow-autodiff and natively (tapeflow-exec).
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function frames | filecheck %s
// RUN: tapeflow-cc %s --function frames -o %t.mlir
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff -o %t-ad.mlir
// RUN: tapeflow-run %t-ad.mlir -e frames_grad --args 0.5 -1.0 1.0 > %t-ad.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow -o %t-tf.mlir
// RUN: tapeflow-exec %t-tf.mlir -e frames_grad --args 0.5 -1.0 1.0 > %t-native.txt
// RUN: diff %t-ad.txt %t-native.txt
// RUN: filecheck %s --check-prefix=VALUES < %t-ad.txt
#include <math.h>
#include <stdlib.h>

typedef struct {
  long long start;
  double *data;
} frame_t;

double walk(frame_t *f) {
  if (f->start < 2) {
    frame_t *next = malloc(sizeof(frame_t));
    next->data = f->data;
    next->start = f->start + 1;
    double x = f->data[f->start];
    double rest = walk(next);
    free(next);
    return x * sin(x) + rest * x;
  }
  return 1.0;
}

double frames(double a, double b) {
  double *data = malloc(2 * sizeof(double));
  data[0] = a;
  data[1] = b;
  frame_t *f = malloc(sizeof(frame_t));
  f->start = 0;
  f->data = data;
  double r = walk(f);
  free(f);
  free(data);
  return r;
}

// CHECK:      func.func @walk(%f_ints: memref<?xi64> {{.*}}, %f_data: memref<?xf64>
// CHECK:        func.call @walk(
// CHECK-NOT:    memref.dealloc
// CHECK:      func.func @frames(

// d/da (a sin a + (b sin b + b) a) = sin a + a cos a + b sin b + b; d/db = a (sin b + b cos b + 1)
// VALUES: result[0]: f64 = 0.7596878043572859
// VALUES: result[1]: f64 = -0.19088664533801813
