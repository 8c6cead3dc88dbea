// RUN: tapeflow-opt %s -p tapeflow-lower-tape --split-input-file | filecheck %s

// The trip count is an argument, known when the loop starts: the cache's array is
// allocated right before the loop, sized max(0, ceil((n - 0) / 1)) at run time, and
// indexed by the loop counters as rule 1's (the pop at (trips - 1) - k): no stack pointer.
func.func @dyn_grad(%x: memref<?xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %cache = tape.init capacity = 4 : !tape.cache<f64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    tape.push %cache, %v : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  %s = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = tape.pop %cache : !tape.cache<f64>
    %a2 = arith.addf %acc, %v : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %cache : !tape.cache<f64>
  func.return %s : f64
}

// CHECK-LABEL: func.func @dyn_grad
// CHECK-NOT:     tape.init
// CHECK:         %[[SPAN:.*]] = arith.subi %n, %c0 : index
// CHECK-NEXT:    %[[SM1:.*]] = arith.subi %c1, %{{.*}} : index
// CHECK-NEXT:    %[[NUM:.*]] = arith.addi %[[SPAN]], %[[SM1]] : index
// CHECK-NEXT:    %[[TR:.*]] = arith.divsi %[[NUM]], %c1 : index
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpi sgt, %[[TR]], %{{.*}} : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.select %[[POS]], %[[TR]], %{{.*}} : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.subi %[[TRIPS]], %[[ONE]] : index
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc(%[[TRIPS]]) {tapeflow.tape} : memref<?xf64>
// CHECK-NOT:     tapeflow.tape_meta
// CHECK:         scf.for %i = %c0 to %n step %c1 {
// CHECK-NEXT:      %v = memref.load %x[%i] : memref<?xf64>
// CHECK-NEXT:      memref.store %v, %[[BUF]][%i] : memref<?xf64>
// CHECK:         scf.for %k
// CHECK-NEXT:      %[[TOP:.*]] = arith.subi %[[LAST]], %k : index
// CHECK-NEXT:      %{{.*}} = memref.load %[[BUF]][%[[TOP]]] : memref<?xf64>
// CHECK:         memref.dealloc %[[BUF]] : memref<?xf64>
// CHECK-NEXT:    func.return

// -----

// A cache created per outer iteration (the trip count of the inner loop is loaded from
// memory: data dependent), as Enzyme does for such loops: one small array per outer
// iteration, sized when the inner loop starts and freed after its reverse.
func.func @per_row_grad(%counts: memref<3xindex>, %x: memref<3x8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f64) {
    %cache = tape.init : !tape.cache<f64>
    %m = memref.load %counts[%i] : memref<3xindex>
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%i, %j] : memref<3x8xf64>
      %e = math.exp %v : f64
      tape.push %cache, %e : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
    %s = scf.for %k = %c0 to %m step %c1 iter_args(%a = %acc) -> (f64) {
      %e = tape.pop %cache : !tape.cache<f64>
      %w = arith.mulf %a, %e : f64
      %a2 = arith.addf %w, %e : f64
      scf.yield %a2 : f64
    } {tapeflow.loop = 1 : i64}
    tape.free %cache : !tape.cache<f64>
    scf.yield %s : f64
  } {tapeflow.loop = 0 : i64}
  func.return %r : f64
}

// CHECK-LABEL: func.func @per_row_grad
// CHECK:         scf.for %i = %c0 to %c3 step %c1
// CHECK-NEXT:      %m = memref.load %counts[%i] : memref<3xindex>
// CHECK:           %[[BUF:.*]] = memref.alloc(%{{.*}}) {tapeflow.tape} : memref<?xf64>
// CHECK-NEXT:      scf.for %j = %c0 to %m step %c1
// CHECK:             memref.store %e, %[[BUF]][%j] : memref<?xf64>
// CHECK:           memref.dealloc %[[BUF]] : memref<?xf64>
// CHECK-NEXT:      scf.yield
