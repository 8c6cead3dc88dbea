// if/else is scf.if; scalars assigned in either branch are its results, and a branch
// that does not assign one yields the value from before the if. Stores stay inside.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, double a) {
  double s = 1.0, t = 2.0;
  if (a > 0.0) {
    s = a * a;
    x[0] = s;
  } else {
    t = -a;
  }
  if (a < 1.0)
    x[1] = t;
  return s + t;
}

// CHECK:      %[[C1:[a-zA-Z0-9_]+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[C2:[a-zA-Z0-9_]+]] = arith.constant 2.000000e+00 : f64
// CHECK:      %[[R0:[a-zA-Z0-9_]+]], %[[R1:[a-zA-Z0-9_]+]] = scf.if %{{.*}} -> (f64, f64) {
// CHECK-NEXT:   %[[SQ:[a-zA-Z0-9_]+]] = arith.mulf %a, %a : f64
// CHECK-NEXT:   memref.store %[[SQ]], %x[%{{.*}}] : memref<?xf64>
// CHECK-NEXT:   scf.yield %[[SQ]], %[[C2]] : f64, f64
// CHECK-NEXT: } else {
// CHECK-NEXT:   %[[NEG:[a-zA-Z0-9_]+]] = arith.negf %a : f64
// CHECK-NEXT:   scf.yield %[[C1]], %[[NEG]] : f64, f64
// CHECK-NEXT: }
// CHECK:      scf.if %{{.*}} {
// CHECK-NEXT:   memref.store %[[R1]], %x[%{{.*}}] : memref<?xf64>
// CHECK-NEXT: }
// CHECK:      arith.addf %[[R0]], %[[R1]] : f64
