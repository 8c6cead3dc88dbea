// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s

// An scf.for with an iter_arg over a buffer updated in place: x[i] is overwritten after it
// is loaded, so it goes on the tape (pushed right after the load, in the forward loop);
// the loop-carried %acc goes on the tape too (pushed first thing in the body). The
// reverse loop counts k = 0..n, recomputes i = lb + (n-1-k)*step, pops first (in reverse
// push order), carries the adjoint of %acc in its iter_args, and both loops share
// tapeflow.loop = 0.
func.func @scale(%x: memref<8xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %n step %c2 iter_args(%acc = %one) -> (f64) {
    %v = memref.load %x[%i] : memref<8xf64>
    %p = arith.mulf %acc, %v : f64
    memref.store %p, %x[%i] : memref<8xf64>
    scf.yield %p : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: func.func @scale_grad(%x: memref<8xf64>, %d_x: memref<8xf64>, %n: index, %seed: f64) {
// CHECK-NEXT:    %[[CV:.*]] = tape.init : !tape.cache<f64>
// CHECK-NEXT:    %[[CACC:.*]] = tape.init : !tape.cache<f64>
// CHECK:         %r = scf.for %i = %c0 to %n step %c2 iter_args(%acc = %one) -> (f64) {
// CHECK-NEXT:      tape.push %[[CACC]], %acc : !tape.cache<f64>
// CHECK-NEXT:      %v = memref.load %x[%i] : memref<8xf64>
// CHECK-NEXT:      tape.push %[[CV]], %v : !tape.cache<f64>
// CHECK-NEXT:      %p = arith.mulf %acc, %v : f64
// CHECK-NEXT:      memref.store %p, %x[%i] : memref<8xf64>
// CHECK-NEXT:      scf.yield %p : f64
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// The reverse sweep's constants come first; then the trip count
// n = max(0, (ub - lb + step - 1) / step).
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ZF:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %n, %c0 : index
// CHECK-NEXT:    %[[S2:.*]] = arith.addi %[[SPAN]], %c2 : index
// CHECK-NEXT:    %[[S3:.*]] = arith.subi %[[S2]], %[[ONE]] : index
// CHECK-NEXT:    %[[N0:.*]] = arith.divsi %[[S3]], %c2 : index
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpi slt, %[[N0]], %[[ZERO]] : index
// CHECK-NEXT:    %[[N:.*]] = arith.select %[[NEG]], %[[ZERO]], %[[N0]] : index
// CHECK-NEXT:    %{{.*}} = scf.for %[[K:.*]] = %[[ZERO]] to %[[N]] step %[[ONE]] iter_args(%[[DACC:.*]] = %seed) -> (f64) {
// CHECK-NEXT:      %[[V:.*]] = tape.pop %[[CV]] : !tape.cache<f64>
// CHECK-NEXT:      %[[ACC:.*]] = tape.pop %[[CACC]] : !tape.cache<f64>
// CHECK-NEXT:      %[[NM1:.*]] = arith.subi %[[N]], %[[ONE]] : index
// CHECK-NEXT:      %[[REV:.*]] = arith.subi %[[NM1]], %[[K]] : index
// CHECK-NEXT:      %[[SCALED:.*]] = arith.muli %[[REV]], %c2 : index
// CHECK-NEXT:      %[[I:.*]] = arith.addi %c0, %[[SCALED]] : index
// The store: dp += dx[i], then dx[i] = 0
// CHECK-NEXT:      %[[DXI:.*]] = memref.load %d_x[%[[I]]] : memref<8xf64>
// CHECK-NEXT:      %[[DP:.*]] = arith.addf %[[DACC]], %[[DXI]] : f64
// CHECK-NEXT:      memref.store %[[ZF]], %d_x[%[[I]]] : memref<8xf64>
// p = acc * v
// CHECK-NEXT:      %[[DACC2:.*]] = arith.mulf %[[DP]], %[[V]] : f64
// CHECK-NEXT:      %[[DV:.*]] = arith.mulf %[[DP]], %[[ACC]] : f64
// The load: dx[i] += dv
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %d_x[%[[I]]] : memref<8xf64>
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[DV]] : f64
// CHECK-NEXT:      memref.store %[[NEW]], %d_x[%[[I]]] : memref<8xf64>
// CHECK-NEXT:      scf.yield %[[DACC2]] : f64
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    tape.free %[[CV]] : !tape.cache<f64>
// CHECK-NEXT:    tape.free %[[CACC]] : !tape.cache<f64>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
