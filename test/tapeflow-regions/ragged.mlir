// RUN: tapeflow-opt %s --split-input-file -p tapeflow-regions --remarks 2>&1 | filecheck %s
// RUN: tapeflow-opt %s --split-input-file -p tapeflow-regions | tapeflow-opt --split-input-file | filecheck %s --check-prefix=ROUND

// The remarks come first, one per cache, in order.
// CHECK: remark: {{.*}}ragged.mlir:25:7: cache of 'w' in a ragged region (10 records indexed by running offsets: the inner trip count varies with the outer iteration)
// CHECK-NEXT: remark: {{.*}}: cache of 'x[l]' kept in Enzyme's layout: bound 'j' of an inner loop varies with another inner loop's iteration (a ragged nest's inner loops must be rectangular)
// CHECK-NEXT: remark: {{.*}}: cache of 'x[j]' kept in Enzyme's layout: bound 'len[i]' of an inner loop is not computed from the outer induction variables alone (memory or loop-carried values)

// A triangular nest (row i has i + 1 records, 10 in all): records are indexed by running
// offsets, a table of the records before each row filled right before the forward nest.
// Forward: record off[i] + j. Reverse: counter k stands for row 3 - k, and kk for column
// n - 1 - kk, so the record is (off[3 - k] + n - 1) - kk.

func.func @triangular(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %n = arith.addi %i, %c1 : index
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%j] : memref<4xf64>
      %w = math.tanh %v : f64
      tape.push %t, %w : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %i = arith.subi %c3, %k : index
    %n = arith.addi %i, %c1 : index
    %s = scf.for %kk = %c0 to %n step %c1 iter_args(%b = %a) -> (f64) {
      %w = tape.pop %t : !tape.cache<f64>
      %b2 = arith.addf %b, %w : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %s : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @triangular
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[OFF:.*]] = memref.alloc() : memref<4xindex>
// CHECK-NEXT:    %{{.*}} = scf.for %[[R:.*]] = %c0 to %c4 step %c1 iter_args(%[[SUM:.*]] = %[[ZERO]]) -> (index) {
// CHECK-NEXT:      %[[N:.*]] = arith.addi %[[R]], %c1 : index
// CHECK-NEXT:      %[[POS:.*]] = arith.cmpi sgt, %[[N]], %[[ZERO]] : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.select %[[POS]], %[[N]], %[[ZERO]] : index
// CHECK-NEXT:      memref.store %[[SUM]], %[[OFF]][%[[R]]] : memref<4xindex>
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[SUM]], %[[ROW]] : index
// CHECK-NEXT:      scf.yield %[[NEXT]] : index
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = region.alloc count = 10 {tapeflow.ragged} : !region.tape<!region.record<f64>>
// CHECK-NEXT:    scf.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %n{{.*}} = arith.addi %i, %c1 : index
// CHECK-NEXT:      %[[BASE:.*]] = memref.load %[[OFF]][%i] : memref<4xindex>
// CHECK-NEXT:      scf.for %j = %c0 to %n{{.*}} step %c1 {
// CHECK-NEXT:        %[[W:.*]] = arith.addi %[[BASE]], %j : index
// CHECK:             region.write %[[T]][%[[W]]], %w : !region.tape<!region.record<f64>>
// CHECK:         scf.for %k = %c0 to %c4 step %c1
// CHECK:           %[[RBASE:.*]] = memref.load %[[OFF]][%{{.*}}] : memref<4xindex>
// CHECK:           %[[LAST:.*]] = arith.addi %[[RBASE]], %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = scf.for %kk = %c0 to %n{{.*}} step %c1
// CHECK-NEXT:        %[[RI:.*]] = arith.subi %[[LAST]], %kk : index
// CHECK-NEXT:        %{{.*}} = region.read %[[T]][%[[RI]]] : !region.tape<!region.record<f64>>
// CHECK:         region.dealloc %[[T]] : !region.tape<!region.record<f64>>
// CHECK-NEXT:    memref.dealloc %[[OFF]] : memref<4xindex>

// ROUND-LABEL: func.func @triangular
// ROUND:         region.alloc count = 10 {tapeflow.ragged}

// -----

// A bound that varies with another inner loop (k < j < i): the inner loops of a ragged
// nest must be rectangular at each outer iteration.
func.func @two_levels(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %i step %c1 {
      scf.for %l = %c0 to %j step %c1 {
        %v = memref.load %x[%l] : memref<4xf64>
        tape.push %t, %v : !tape.cache<f64>
      } {tapeflow.loop = 2 : i64}
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %s = scf.for %kj = %c0 to %k step %c1 iter_args(%b = %a) -> (f64) {
      %u = scf.for %kl = %c0 to %kj step %c1 iter_args(%e = %b) -> (f64) {
        %w = tape.pop %t : !tape.cache<f64>
        %e2 = arith.addf %e, %w : f64
        scf.yield %e2 : f64
      } {tapeflow.loop = 2 : i64}
      scf.yield %u : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %s : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @two_levels
// CHECK-NOT:     region.
// CHECK:         tape.push %t, %v

// -----

// A bound loaded from memory inside the outer loop: not a function of the outer
// induction variable.
func.func @loaded_bound(%x: memref<4xf64>, %len: memref<4xindex>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %n = memref.load %len[%i] : memref<4xindex>
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%j] : memref<4xf64>
      tape.push %t, %v : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %n = memref.load %len[%k] : memref<4xindex>
    %s = scf.for %kk = %c0 to %n step %c1 iter_args(%b = %a) -> (f64) {
      %w = tape.pop %t : !tape.cache<f64>
      %b2 = arith.addf %b, %w : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %s : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @loaded_bound
// CHECK-NOT:     region.
// CHECK:         tape.push %t, %v
