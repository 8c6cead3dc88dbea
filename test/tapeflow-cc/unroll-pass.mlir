// tapeflow-unroll applies `tapeflow.unroll`: k copies per iteration (induction values
// iv, iv + step, ...; each copy's yield feeding the next), a remainder loop unless the
// trip count is a known multiple of k, the split computed at run time for a run-time
// bound; "full", or a factor that reaches a known trip count, replaces the loop by its
// copies; 1, or "full" with an unknown trip count, leaves the loop. The attribute is
// always removed.
// RUN: tapeflow-opt %s -p tapeflow-unroll | filecheck %s

func.func @ten_by_four(%x: memref<10xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %c10 step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<10xf64>
    %b = arith.addf %a, %v : f64
    scf.yield %b : f64
  } {tapeflow.unroll = 4 : i64}
  func.return %s : f64
}
// CHECK-LABEL: func.func @ten_by_four
// CHECK:       %[[WHOLE:.*]] = arith.constant 8 : index
// CHECK:       %[[SPLIT_OFF:.*]] = arith.muli %[[WHOLE]], %[[C1:.*]] : index
// CHECK:       %[[SPLIT:.*]] = arith.addi %[[C0:.*]], %[[SPLIT_OFF]] : index
// CHECK:       %[[K:.*]] = arith.constant 4 : index
// CHECK:       %[[WIDE:.*]] = arith.muli %[[C1]], %[[K]] : index
// CHECK:       %[[MAIN:.*]] = scf.for %[[IV:.*]] = %[[C0]] to %[[SPLIT]] step %[[WIDE]] iter_args(%[[A0:.*]] = %{{.*}}) -> (f64) {
// CHECK-NEXT:    %[[V0:.*]] = memref.load %{{.*}}[%[[IV]]]
// CHECK-NEXT:    %[[B0:.*]] = arith.addf %[[A0]], %[[V0]] : f64
// CHECK-NEXT:    %[[J1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[O1:.*]] = arith.muli %[[C1]], %[[J1]] : index
// CHECK-NEXT:    %[[I1:.*]] = arith.addi %[[IV]], %[[O1]] : index
// CHECK-NEXT:    %[[V1:.*]] = memref.load %{{.*}}[%[[I1]]]
// CHECK-NEXT:    %[[B1:.*]] = arith.addf %[[B0]], %[[V1]] : f64
// CHECK-COUNT-2: arith.addf
// CHECK-NEXT:    scf.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[REST:.*]] = scf.for %{{.*}} = %[[SPLIT]] to %[[C10:.*]] step %[[C1]] iter_args(%{{.*}} = %[[MAIN]]) -> (f64) {
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    scf.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %[[REST]] : f64

func.func @eight_by_four(%x: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f64
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %x[%i] : memref<8xf64>
  } {tapeflow.unroll = 4 : i64}
  func.return
}
// CHECK-LABEL: func.func @eight_by_four
// CHECK:       scf.for
// CHECK-COUNT-4: memref.store
// CHECK-NOT:   scf.for
// CHECK:       func.return

func.func @runtime(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f64
  scf.for %i = %c0 to %n step %c2 {
    memref.store %one, %x[%i] : memref<?xf64>
  } {tapeflow.unroll = 2 : i64}
  func.return
}
// CHECK-LABEL: func.func @runtime
// CHECK:       %[[SPAN:.*]] = arith.subi %[[N:.*]], %[[LB:.*]] : index
// CHECK:       %[[POS:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// CHECK:       %[[SM1:.*]] = arith.subi %[[STEP:.*]], %{{.*}} : index
// CHECK:       %[[UP:.*]] = arith.addi %[[POS]], %[[SM1]] : index
// CHECK:       %[[COUNT:.*]] = arith.divui %[[UP]], %[[STEP]] : index
// CHECK:       %[[Q:.*]] = arith.divui %[[COUNT]], %[[K:.*]] : index
// CHECK:       %[[WHOLE:.*]] = arith.muli %[[Q]], %[[K]] : index
// CHECK:       %[[OFF:.*]] = arith.muli %[[WHOLE]], %[[STEP]] : index
// CHECK:       %[[SPLIT:.*]] = arith.addi %[[LB]], %[[OFF]] : index
// CHECK:       scf.for %{{.*}} = %[[LB]] to %[[SPLIT]] step %{{.*}} {
// CHECK-COUNT-2: memref.store
// CHECK:       scf.for %{{.*}} = %[[SPLIT]] to %[[N]] step %[[STEP]] {
// CHECK-NEXT:    memref.store
// CHECK-NOT:   tapeflow.unroll

func.func @full(%x: memref<3xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<3xf64>
    %b = arith.mulf %a, %v : f64
    scf.yield %b : f64
  } {tapeflow.unroll = "full"}
  func.return %s : f64
}
// CHECK-LABEL: func.func @full
// CHECK-NOT:   scf.for
// CHECK:       %[[V0:.*]] = memref.load %{{.*}}[%[[C0:.*]]]
// CHECK-NEXT:  %[[B0:.*]] = arith.mulf %[[Z:.*]], %[[V0]] : f64
// CHECK:       memref.load
// CHECK-NEXT:  %[[B1:.*]] = arith.mulf %[[B0]], %{{.*}} : f64
// CHECK:       memref.load
// CHECK-NEXT:  %[[B2:.*]] = arith.mulf %[[B1]], %{{.*}} : f64
// CHECK-NEXT:  func.return %[[B2]] : f64

func.func @kept(%x: memref<3xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %one, %x[%i] : memref<3xf64>
  } {tapeflow.unroll = 8 : i64}
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %one, %x[%i] : memref<3xf64>
  } {tapeflow.unroll = 1 : i64}
  scf.for %i = %c0 to %n step %c1 {
    memref.store %one, %x[%c0] : memref<3xf64>
  } {tapeflow.unroll = "full"}
  func.return
}
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: memref.store
// CHECK-COUNT-2: scf.for %{{.*}} {
// CHECK-NEXT:    memref.store
// CHECK-NEXT:  }
// CHECK-NOT:   tapeflow.unroll
// CHECK:       func.return
