// Compound assignments and ++/-- read, compute in C's type and write back, on scalars
// (new SSA values) and on array elements (load, op, store).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, int k) {
  double s = x[0];
  s -= 1.0;
  s *= s;
  s /= 4.0;
  x[k] += s;
  x[k]++;
  k *= 3;
  k %= 5;
  return s + x[k];
}

// CHECK:      %[[S0:[a-zA-Z0-9_]+]] = memref.load %x[%{{.*}}] : memref<?xf64>
// CHECK:      %[[S1:[a-zA-Z0-9_]+]] = arith.subf %[[S0]], %{{.*}} : f64
// CHECK-NEXT: %[[S2:[a-zA-Z0-9_]+]] = arith.mulf %[[S1]], %[[S1]] : f64
// CHECK:      %[[S3:[a-zA-Z0-9_]+]] = arith.divf %[[S2]], %{{.*}} : f64
// CHECK-NEXT: %[[X:[a-zA-Z0-9_]+]] = memref.load %x[%k] : memref<?xf64>
// CHECK-NEXT: %[[Y:[a-zA-Z0-9_]+]] = arith.addf %[[X]], %[[S3]] : f64
// CHECK-NEXT: memref.store %[[Y]], %x[%k] : memref<?xf64>
// CHECK-NEXT: %[[Z:[a-zA-Z0-9_]+]] = memref.load %x[%k] : memref<?xf64>
// CHECK:      arith.addf %[[Z]], %{{.*}} : f64
// CHECK-NEXT: memref.store
// CHECK:      %[[K1:[a-zA-Z0-9_]+]] = arith.muli %k, %{{.*}} : index
// CHECK:      arith.remsi %[[K1]], %{{.*}} : index
