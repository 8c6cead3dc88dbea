// RUN: tapeflow-opt %s -p tapeflow-cleanup | filecheck %s
// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/softmax_ce.mlir -p 'tapeflow{cleanup=true mode=always}' | filecheck %s --check-prefix=SMCE
// RUN: tapeflow-opt --help | filecheck %s --check-prefix=HELP

// Why: the shapes tapeflow-autodiff and the tape lowerings leave in reverse loops, which
// every benchmarked variant gets removed before simulation: a generic trip count
// (ub - lb + step - 1) / step with step 1, `iv * 1`, `0 + x`, and index arithmetic that
// does not depend on the loop (hoisted by xDSL's licm). The division by 1 folds away.
func.func @rev(%x: memref<8xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0.0 : f64
  %span = arith.subi %n, %c0 : index
  %up = arith.addi %span, %c0 : index
  %trips = arith.divsi %up, %c1 : index
  %r = scf.for %k = %c0 to %trips step %c1 iter_args(%a = %zero) -> (f64) {
    %last = arith.subi %trips, %c1 : index
    %rev = arith.subi %last, %k : index
    %scaled = arith.muli %rev, %c1 : index
    %iv = arith.addi %c0, %scaled : index
    %i = arith.minsi %iv, %c7 : index
    %v = memref.load %x[%i] : memref<8xf64>
    %a2 = arith.addf %a, %v : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: func.func @rev
// CHECK-NOT:     arith.divsi
// CHECK-NOT:     arith.muli
// CHECK:         %[[LAST:.*]] = arith.subi %n, %{{.*}} : index
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %n step
// CHECK-NEXT:      %[[REV:.*]] = arith.subi %[[LAST]], %[[K]] : index
// CHECK-NEXT:      %[[I:.*]] = arith.minsi %[[REV]], %{{.*}} : index
// CHECK-NEXT:      memref.load %x[%[[I]]] : memref<8xf64>

// The TapeFlow output of softmax_ce (a single-layer loop whose result is returned) goes
// through canonicalize: it used to fail with "Operation insertion point must have a
// parent block" (a detached func.return kept as a user; see transforms/autodiff/driver.py).
// SMCE-LABEL: func.func @softmax_ce_grad
// SMCE:         stream.fifo_alloc

// HELP: tapeflow-cleanup           Cleanup before simulation
