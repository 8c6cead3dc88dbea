// Conversions: every C integer scalar is index (so int -> double goes through i64),
// double -> long truncates (fptosi), float <-> double extend/truncate, comparisons are i1
// and become 0/1 integers when used as numbers. Constant int -> double folds.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double x, float y, int n) {
  long k = (long)x;
  double d = n;
  float z = (float)x + y;
  int b = x > 0.0;
  return d + k + z + b + 2;
}

// CHECK:      %[[TWO:[a-zA-Z0-9_]+]] = arith.constant 2.000000e+00 : f64
// CHECK:      %[[K:[a-zA-Z0-9_]+]] = arith.fptosi %x : f64 to i64
// CHECK-NEXT: %[[KI:[a-zA-Z0-9_]+]] = arith.index_cast %[[K]] : i64 to index
// CHECK-NEXT: %[[N:[a-zA-Z0-9_]+]] = arith.index_cast %n : index to i64
// CHECK-NEXT: %[[D:[a-zA-Z0-9_]+]] = arith.sitofp %[[N]] : i64 to f64
// CHECK-NEXT: %[[XT:[a-zA-Z0-9_]+]] = arith.truncf %x : f64 to f32
// CHECK-NEXT: %[[Z:[a-zA-Z0-9_]+]] = arith.addf %[[XT]], %y : f32
// CHECK:      %[[B:[a-zA-Z0-9_]+]] = arith.cmpf ogt, %x, %{{.*}} : f64
// CHECK-NEXT: %[[BE:[a-zA-Z0-9_]+]] = arith.extui %[[B]] : i1 to i64
// CHECK-NEXT: arith.index_cast %[[BE]] : i64 to index
// CHECK:      arith.extf %[[Z]] : f32 to f64
// CHECK:      arith.addf %{{.*}}, %[[TWO]] : f64
