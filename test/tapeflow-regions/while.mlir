// RUN: tapeflow-opt %s --split-input-file -p tapeflow-regions --remarks 2>&1 | filecheck %s
// RUN: tapeflow-opt %s --split-input-file -p tapeflow-regions | tapeflow-opt --split-input-file | filecheck %s --check-prefix=ROUND

// A while loop (its counter %it, the trailing argument tapeflow-autodiff gives it) in an
// outer loop: one record per while iteration, with both values of the iteration as
// fields, in a growable record tape. Forward: the records of outer iteration i start
// at off[i], stored by the forward sweep (off[0] = 0; off[i + 1] = off[i] + count once the
// while of row i ends); each write first reserves room for its record. Reverse: counter kk
// of the loop over the while's count stands for iteration count - 1 - kk, so the record is
// (off[3 - k] + count - 1) - kk, the index of a ragged nest.

// CHECK: remark: {{.*}}while.mlir:34:7: cache of 'w' in a growable record tape (one record per iteration of an 'scf.while': the record count is known only as it runs)
// CHECK-NEXT: remark: {{.*}}while.mlir:33:7: cache of 'b' in a growable record tape
// CHECK-NEXT: remark: {{.*}}while.mlir:112:5: cache of 'c' kept in Enzyme's layout: pushed or popped in the condition region of 'scf.while' (it runs once more than the body)
// CHECK-NEXT: remark: {{.*}}while.mlir:117:5: cache of 'w' in a growable record tape

func.func @nest(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %tw = tape.init : !tape.cache<f64>
  %tb = tape.init : !tape.cache<i1>
  %tn = tape.init : !tape.cache<index>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    %y, %n = scf.while (%w = %v, %it = %c0) : (f64, index) -> (f64, index) {
      %big = arith.cmpf ogt, %w, %one : f64
      scf.condition(%big) %w, %it : f64, index
    } do {
    ^bb0(%w: f64, %it: index):
      %b = arith.cmpf olt, %w, %z : f64
      tape.push %tw, %w : !tape.cache<f64>
      tape.push %tb, %b : !tape.cache<i1>
      %h = math.sqrt %w : f64
      %it1 = arith.addi %it, %c1 : index
      scf.yield %h, %it1 : f64, index
    } attributes {tapeflow.loop = 1 : i64}
    tape.push %tn, %n : !tape.cache<index>
    memref.store %y, %x[%i] : memref<4xf64>
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %n = tape.pop %tn : !tape.cache<index>
    %s = scf.for %kk = %c0 to %n step %c1 iter_args(%b = %a) -> (f64) {
      %w = tape.pop %tw : !tape.cache<f64>
      %c = tape.pop %tb : !tape.cache<i1>
      %w2 = arith.select %c, %z, %w : f64
      %b2 = arith.addf %b, %w2 : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %s : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %tw : !tape.cache<f64>
  tape.free %tb : !tape.cache<i1>
  tape.free %tn : !tape.cache<index>
  func.return %r : f64
}

// CHECK-LABEL: func.func @nest(
// CHECK:         %[[OFF:.*]] = memref.alloc() : memref<5xindex>
// CHECK-NEXT:    memref.store %[[C0:.*]], %[[OFF]][%[[C0]]] : memref<5xindex>
// CHECK-NEXT:    %[[T:.*]] = region.alloc count = 4 {tapeflow.growable} : !region.tape<!region.record<f64, i1>>
// CHECK-NEXT:    %[[N:.*]] = region.alloc(%{{.*}}) : !region.tape<!region.record<index>>
// CHECK-NEXT:    scf.for %i = %c0 to %c4 step %c1 {
// CHECK:           %[[BASE:.*]] = memref.load %[[OFF]][%i] : memref<5xindex>
// CHECK-NEXT:      %y, %n = scf.while
// CHECK:           ^bb0(%w_1: f64, %it_1: index):
// CHECK-NEXT:        %[[IDX:.*]] = arith.addi %[[BASE]], %it_1 : index
// CHECK-NEXT:        %b = arith.cmpf olt, %w_1, %z : f64
// CHECK-NEXT:        %[[NEED:.*]] = arith.addi %[[IDX]], %[[C1:.*]] : index
// CHECK-NEXT:        region.reserve %[[T]], %[[NEED]] : !region.tape<!region.record<f64, i1>>
// CHECK-NEXT:        region.write %[[T]][%[[IDX]]], %w_1, %b : !region.tape<!region.record<f64, i1>>
// CHECK:           } attributes {tapeflow.loop = 1 : i64}
// CHECK-NEXT:      %[[END:.*]] = arith.addi %[[BASE]], %n : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %i, %[[C1]] : index
// CHECK-NEXT:      memref.store %[[END]], %[[OFF]][%[[NEXT]]] : memref<5xindex>
// CHECK-NEXT:      region.write %[[N]][%i], %n : !region.tape<!region.record<index>>
// CHECK:         scf.for %k = %c0 to %c4 step %c1
// CHECK-NEXT:      %[[ROW:.*]] = arith.subi %[[C3:.*]], %k : index
// CHECK-NEXT:      %[[CNT:.*]] = region.read %[[N]][%[[ROW]]] : !region.tape<!region.record<index>>
// CHECK-NEXT:      %[[RBASE:.*]] = memref.load %[[OFF]][%[[ROW]]] : memref<5xindex>
// CHECK:           %[[LAST:.*]] = arith.addi %[[RBASE]], %{{.*}} : index
// CHECK-NEXT:      scf.for %kk = %c0 to %[[CNT]] step %c1
// CHECK-NEXT:        %[[RIDX:.*]] = arith.subi %[[LAST]], %kk : index
// CHECK-NEXT:        %{{.*}}, %{{.*}} = region.read %[[T]][%[[RIDX]]] : !region.tape<!region.record<f64, i1>>
// CHECK:         region.dealloc %[[T]]
// CHECK-NEXT:    memref.dealloc %[[OFF]] : memref<5xindex>
// CHECK-NEXT:    region.dealloc %[[N]]
// CHECK-NOT:     tape.

// ROUND-LABEL: func.func @nest(
// ROUND:         region.reserve
// ROUND:         region.write

// Its layers and tiles: test/tapeflow-layers/while.mlir, test/tapeflow-stream/while.mlir.

// -----

// A while loop in no other loop: its record index is its counter, the reverse index
// count - 1 - kk; no offsets table. A value pushed in the condition region (it runs once
// more than the body) stays a cache.

func.func @top(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %tw = tape.init : !tape.cache<f64>
  %tc = tape.init : !tape.cache<i1>
  %y, %n = scf.while (%w = %x, %it = %c0) : (f64, index) -> (f64, index) {
    %c = arith.cmpf ogt, %w, %one : f64
    tape.push %tc, %c : !tape.cache<i1>
    scf.condition(%c) %w, %it : f64, index
  } do {
  ^bb0(%w: f64, %it: index):
    tape.push %tw, %w : !tape.cache<f64>
    %h = math.sqrt %w : f64
    %it1 = arith.addi %it, %c1 : index
    scf.yield %h, %it1 : f64, index
  } attributes {tapeflow.loop = 0 : i64}
  %c = tape.pop %tc : !tape.cache<i1>
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %y) -> (f64) {
    %w = tape.pop %tw : !tape.cache<f64>
    %a2 = arith.addf %a, %w : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %tw : !tape.cache<f64>
  tape.free %tc : !tape.cache<i1>
  func.return %r : f64
}

// CHECK-LABEL: func.func @top(
// CHECK:         %[[T:.*]] = region.alloc count = 16 {tapeflow.growable} : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %y, %n = scf.while
// CHECK:           tape.push %tc
// CHECK:         ^bb0(%w_1: f64, %it_1: index):
// CHECK-NEXT:      %[[NEED:.*]] = arith.addi %it_1, %{{.*}} : index
// CHECK-NEXT:      region.reserve %[[T]], %[[NEED]] : !region.tape<!region.record<f64>>
// CHECK-NEXT:      region.write %[[T]][%it_1], %w_1 : !region.tape<!region.record<f64>>
// CHECK:         %[[LAST:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    scf.for %k = %c0 to %n step %c1
// CHECK-NEXT:      %[[RIDX:.*]] = arith.subi %[[LAST]], %k : index
// CHECK-NEXT:      %{{.*}} = region.read %[[T]][%[[RIDX]]] : !region.tape<!region.record<f64>>
// CHECK:         region.dealloc %[[T]]
