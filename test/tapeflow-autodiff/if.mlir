// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s

// scf.if with a result inside a loop: the i1 condition is cached once per iteration
// (pushed right after the cmpf), and the reverse loop pops it and runs the adjoint of
// the branch that was taken. The branches read %v from the reverse loop's pop and yield
// the updated adjoint of the outer value %s they touch.
func.func @relu_scale(%x: memref<4xf64>, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<4xf64>
    %c = arith.cmpf ogt, %v, %z : f64
    %y = scf.if %c -> (f64) {
      %p = arith.mulf %v, %s : f64
      scf.yield %p : f64
    } else {
      scf.yield %z : f64
    }
    %a = arith.addf %acc, %y : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: func.func @relu_scale_grad(%x: memref<4xf64>, %d_x: memref<4xf64>, %s: f64, %seed: f64) -> f64 {
// CHECK-NEXT:    %[[CC:.*]] = tape.init : !tape.cache<i1>
// CHECK-NOT:     tape.init
// CHECK:           %c = arith.cmpf ogt, %v, %z : f64
// CHECK-NEXT:      tape.push %[[CC]], %c : !tape.cache<i1>
// CHECK-NEXT:      %y = scf.if %c -> (f64) {
// CHECK:         } {tapeflow.loop = 0 : i64}
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %{{.*}}, %{{.*}} = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[DACC:.*]] = %seed, %[[DS:.*]] = %{{.*}}) -> (f64, f64) {
// CHECK-NEXT:      %[[C:.*]] = tape.pop %[[CC]] : !tape.cache<i1>
// The load of x[i] is recomputed (x is never written).
// CHECK:           %[[V:.*]] = memref.load %x[%[[I:.*]]] : memref<4xf64>
// CHECK-NEXT:      %[[DV:.*]], %[[RES:.*]] = scf.if %[[C]] -> (f64, f64) {
// CHECK-NEXT:        %[[DV1:.*]] = arith.mulf %[[DACC]], %s : f64
// CHECK-NEXT:        %[[DV2:.*]] = arith.addf %[[Z]], %[[DV1]] : f64
// CHECK-NEXT:        %[[DS1:.*]] = arith.mulf %[[DACC]], %[[V]] : f64
// CHECK-NEXT:        %[[DS2:.*]] = arith.addf %[[DS]], %[[DS1]] : f64
// CHECK-NEXT:        scf.yield %[[DV2]], %[[DS2]] : f64, f64
// CHECK-NEXT:      } else {
// CHECK-NEXT:        scf.yield %[[Z]], %[[DS]] : f64, f64
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %d_x[%[[I]]] : memref<4xf64>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[DV]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %d_x[%[[I]]] : memref<4xf64>
// CHECK-NEXT:      scf.yield %[[DACC]], %[[RES]] : f64, f64
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    tape.free %[[CC]] : !tape.cache<i1>
// CHECK-NEXT:    func.return %{{.*}} : f64
