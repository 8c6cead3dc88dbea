// A `static const` table is copied into a stack array at the start of the function that
// reads it; a `static const` scalar and `#define`/-D constants are arith.constant.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s -DSCALE=4.0 | filecheck %s --check-prefix=DEF

#ifndef SCALE
#define SCALE 2.0
#endif
static const double weights[3] = {0.25, 0.5};
static const double bias = 1.5;

double f(const double *x) {
  double s = bias;
  for (int i = 0; i < 3; i++)
    s += weights[i] * x[i] * SCALE;
  return s;
}

// DEF: arith.constant 4.000000e+00 : f64

// CHECK:      %[[BIAS:[a-zA-Z0-9_]+]] = arith.constant 1.500000e+00 : f64
// CHECK-NEXT: %[[A:[a-zA-Z0-9_]+]] = arith.constant 2.500000e-01 : f64
// CHECK:      %[[B:[a-zA-Z0-9_]+]] = arith.constant 5.000000e-01 : f64
// CHECK:      %[[Z:[a-zA-Z0-9_]+]] = arith.constant 0.000000e+00 : f64
// CHECK:      %[[S:[a-zA-Z0-9_]+]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %weights = memref.alloca() : memref<3xf64>
// CHECK-NEXT: memref.store %[[A]], %weights[%{{.*}}] : memref<3xf64>
// CHECK-NEXT: memref.store %[[B]], %weights[%{{.*}}] : memref<3xf64>
// CHECK-NEXT: memref.store %[[Z]], %weights[%{{.*}}] : memref<3xf64>
// CHECK-NEXT: scf.for %i = {{.*}} iter_args(%{{.*}} = %[[BIAS]]) -> (f64) {
// CHECK-NEXT:   memref.load %weights[%i] : memref<3xf64>
// CHECK:        arith.mulf %{{.*}}, %[[S]] : f64
