// A canonical counted loop is an scf.for over index; `<=` adds one to the bound, `+= 2`
// is the step, and a scalar assigned in the body becomes an iter_arg and the loop's result.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, int n) {
  double s = 0.0;
  for (int i = 1; i <= n; i += 2)
    s += x[i];
  return s;
}

// CHECK:      func.func @f(%x: memref<?xf64> {{.*}}, %n: index {{.*}}) -> f64 {
// CHECK-NEXT:   %[[S0:[a-zA-Z0-9_]+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:   %[[ONE:[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT:   %[[STEP:[a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK-NEXT:   %[[UB:[a-zA-Z0-9_]+]] = arith.addi %n, %[[ONE]] : index
// CHECK-NEXT:   %[[R:[a-zA-Z0-9_]+]] = scf.for %i = %[[ONE]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:[a-zA-Z0-9_]+]] = %[[S0]]) -> (f64) {
// CHECK-NEXT:     %[[V:[a-zA-Z0-9_]+]] = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:     %[[N:[a-zA-Z0-9_]+]] = arith.addf %[[ACC]], %[[V]] : f64
// CHECK-NEXT:     scf.yield %[[N]] : f64
// CHECK:        func.return %[[R]] : f64
