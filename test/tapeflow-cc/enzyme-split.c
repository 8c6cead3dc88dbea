// Enzyme's split mode: __enzyme_augmentfwd runs f and returns its tape, __enzyme_reverse
// (the function's arguments, the result's adjoint, the tape) runs the reverse sweep. f gets
// tapeflow.split; tapeflow-autodiff adds @f_augment (returning the tape) and @f_reverse
// (taking it) beside @f_grad, cut from it: the tape holds what the reverse sweep needs of
// the forward sweep (here the overwritten x[0], 8 bytes; in a loop, its caches), and
// tapeflow-lower-tape lays each cache on it as Enzyme's growable cache. An
// enzyme_allocated buffer smaller than the tape is Enzyme's error, at the call.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt -p tapeflow-autodiff | filecheck %s --check-prefix=AD
// RUN: tapeflow-cc %s -D LOOP | tapeflow-opt -p tapeflow-autodiff,tapeflow-lower-tape | filecheck %s --check-prefix=LOWER
// RUN: not tapeflow-cc %s -D SMALL 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not tapeflow-cc %s -D NOTAPE 2>&1 | filecheck %s --check-prefix=NOTAPE
#include <math.h>

extern int enzyme_dup, enzyme_const, enzyme_allocated, enzyme_tape;
void *__enzyme_augmentfwd(void *, ...);
double __enzyme_reverse(void *, ...);

void f(double *x) { x[0] = sin(x[0]); }

void *f_aug(double *x, double *dx) { return __enzyme_augmentfwd((void *)f, x, dx); }
void f_rev(double *x, double *dx, void *tape) { __enzyme_reverse((void *)f, x, dx, tape); }

#ifdef LOOP
double g(double *x, double s, int n) {
  double acc = 0;
  for (int i = 0; i < n; i++)
    acc = sin(acc * x[i]) + s;
  return acc;
}
void *g_aug(double *x, double *dx, double s, int n) {
  return __enzyme_augmentfwd((void *)g, x, dx, s, enzyme_const, n);
}
double g_rev(double *x, double *dx, double s, int n, double dret, void *tape) {
  return __enzyme_reverse((void *)g, x, dx, s, enzyme_const, n, dret, tape);
}
#endif

#ifdef SMALL
void f_small(double *x, double *dx, void *tape) {
  __enzyme_reverse((void *)f, enzyme_dup, x, dx, enzyme_allocated, 4, enzyme_tape, tape);
}
#endif

#ifdef NOTAPE
void f_notape(double *x, double *dx) {
  __enzyme_augmentfwd((void *)f, x, dx, enzyme_allocated, 16);
}
#endif

// CHECK: func.func @f(%x: memref<?xf64> {{.*}}) attributes {tapeflow.autodiff, tapeflow.split}

// AD: func.func @f_grad(%x: memref<?xf64>, %d_x: memref<?xf64>)
// AD: func.func @f_augment(%x: memref<?xf64>, %d_x: memref<?xf64>) -> f64 attributes {tapeflow.tape_bytes = 8 : i64}
// AD:   %[[OLD:.*]] = memref.load %x[%{{.*}}]
// AD:   memref.store %{{.*}}, %x[%{{.*}}]
// AD:   func.return %[[OLD]] : f64
// AD: func.func @f_reverse(%x: memref<?xf64>, %d_x: memref<?xf64>, %[[T:.*]]: f64)
// AD:   math.cos %[[T]] : f64

// LOWER: func.func @g_augment(%x: memref<?xf64>, %d_x: memref<?xf64>, %s: f64, %n: index) -> (memref<memref<?xf64>>, memref<index>, memref<index>) attributes {tapeflow.tape_bytes = 8 : i64}
// LOWER-NOT: tape.
// LOWER: func.func @g_reverse(%x: memref<?xf64>, %d_x: memref<?xf64>, %s: f64, %n: index, %seed: f64, %{{.*}}: memref<memref<?xf64>>, %{{.*}}: memref<index>, %{{.*}}: memref<index>) -> f64

// SMALL: error: {{.*}}enzyme-split.c:42:3: Enzyme: need 8 bytes have 4 bytes
// NOTAPE: error: {{.*}}enzyme-split.c:48:3: __enzyme_augmentfwd: enzyme_allocated without enzyme_tape (the buffer)
