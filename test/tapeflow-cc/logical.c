// && and || short-circuit when the right operand reads memory (it may be out of bounds
// when the left decides), as an scf.if on i1; otherwise both sides are evaluated (andi/ori).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

int f(const double *x, int i, int n) {
  int a = i < n && x[i] > 0.0;
  int b = i < 0 || i >= n;
  return !a + b;
}

// CHECK:      %[[F:[a-zA-Z0-9_]+]] = arith.constant false
// CHECK:      %[[T:[a-zA-Z0-9_]+]] = arith.constant true
// CHECK:      %[[L:[a-zA-Z0-9_]+]] = arith.cmpi slt, %i, %n : index
// CHECK-NEXT: %[[A:[a-zA-Z0-9_]+]] = scf.if %[[L]] -> (i1) {
// CHECK-NEXT:   memref.load %x[%i]
// CHECK-NEXT:   %[[G:[a-zA-Z0-9_]+]] = arith.cmpf ogt
// CHECK-NEXT:   scf.yield %[[G]] : i1
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %[[F]] : i1
// CHECK:      arith.cmpi slt, %i,
// CHECK-NEXT: arith.cmpi sge, %i, %n : index
// CHECK-NEXT: arith.ori
// CHECK:      arith.xori %{{.*}}, %[[T]] : i1
