// `c ? a : b` is arith.select when neither arm reads memory or has effects (both are
// evaluated), and an scf.if with a result otherwise (only the chosen arm may load).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, double a, int i, int n) {
  double r = a > 0.0 ? a : 0.01 * a;
  double s = i < n ? x[i] : 0.0;
  return r + s;
}

// CHECK:      %[[C:[a-zA-Z0-9_]+]] = arith.cmpf ogt, %a, %{{.*}} : f64
// CHECK:      %[[M:[a-zA-Z0-9_]+]] = arith.mulf %{{.*}}, %a : f64
// CHECK-NEXT: %[[R:[a-zA-Z0-9_]+]] = arith.select %[[C]], %a, %[[M]] : f64
// CHECK:      %[[IN:[a-zA-Z0-9_]+]] = arith.cmpi slt, %i, %n : index
// CHECK-NEXT: %[[S:[a-zA-Z0-9_]+]] = scf.if %[[IN]] -> (f64) {
// CHECK-NEXT:   %[[V:[a-zA-Z0-9_]+]] = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:   scf.yield %[[V]] : f64
// CHECK-NEXT: } else {
