// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s

// func.call of a function of the module is inlined into the gradient (the callee and the
// primal are unchanged); the callee's body is then differentiated like the caller's.
func.func @sq(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  func.return %r : f64
}
func.func @f(%x: memref<3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<3xf64>
    %q = func.call @sq(%v) : (f64) -> f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: func.func @sq(%a: f64) -> f64 {
// CHECK-LABEL: func.func @f(%x: memref<3xf64>) -> f64 attributes {tapeflow.autodiff} {
// CHECK:           %q = func.call @sq(%v) : (f64) -> f64
// CHECK-LABEL: func.func @f_grad(%x: memref<3xf64>, %d_x: memref<3xf64>, %seed: f64) {
// CHECK-NOT:     func.call
// CHECK-NOT:     tape.init
// CHECK:           %v = memref.load %x[%i] : memref<3xf64>
// CHECK-NEXT:      %r_1 = arith.mulf %v, %v : f64
// CHECK-NEXT:      %a = arith.addf %acc, %r_1 : f64
// CHECK:         scf.for
// CHECK:           %[[V:.*]] = memref.load %x[%[[I:.*]]] : memref<3xf64>
// CHECK-NEXT:      %[[D1:.*]] = arith.mulf %{{.*}}, %[[V]] : f64
// CHECK-NEXT:      %[[D2:.*]] = arith.mulf %{{.*}}, %[[V]] : f64
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[D1]], %[[D2]] : f64
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %d_x[%[[I]]] : memref<3xf64>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[D]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %d_x[%[[I]]] : memref<3xf64>
// CHECK-NOT:     func.func @sq_grad
