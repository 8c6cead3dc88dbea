// RUN: tapeflow-opt %s -p tapeflow-lower-tape --split-input-file | filecheck %s

// A value pushed in a 4x3 nest of constant trip counts and popped in the mirrored reverse
// nest: one memref<4x3xf64>, stored at (i, j) and loaded at (3-k, 2-l).
func.func @f_grad(%x: memref<4x3xf64>, %dx: memref<4x3xf64>, %seed: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %cache = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x3xf64>
      %t = math.tanh %v : f64
      tape.push %cache, %t : !tape.cache<f64>
      memref.store %t, %x[%i, %j] : memref<4x3xf64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  scf.for %k = %c0 to %c4 step %c1 {
    %c3m = arith.constant 3 : index
    %n1 = arith.subi %c3m, %k : index
    scf.for %l = %c0 to %c3 step %c1 {
      %t = tape.pop %cache : !tape.cache<f64>
      %c2 = arith.constant 2 : index
      %m1 = arith.subi %c2, %l : index
      %d = memref.load %dx[%n1, %m1] : memref<4x3xf64>
      %tt = arith.mulf %t, %t : f64
      %dd = arith.mulf %d, %tt : f64
      memref.store %dd, %dx[%n1, %m1] : memref<4x3xf64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  tape.free %cache : !tape.cache<f64>
  func.return
}

// CHECK-LABEL: func.func @f_grad
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}
// CHECK:         %[[BUF:.*]] = memref.alloc() {tapeflow.tape} : memref<4x3xf64>
// CHECK:         scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %{{.*}} = memref.load %x
// CHECK-NEXT:        %[[T:.*]] = math.tanh
// CHECK-NEXT:        memref.store %[[T]], %[[BUF]][%[[I]], %[[J]]] : memref<4x3xf64>
// CHECK:         scf.for %[[K:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[N1:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[RI:.*]] = arith.subi %[[N1]], %[[K]] : index
// CHECK:           scf.for %[[L:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:        %[[N2:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[RJ:.*]] = arith.subi %[[N2]], %[[L]] : index
// CHECK-NEXT:        %[[P:.*]] = memref.load %[[BUF]][%[[RI]], %[[RJ]]] : memref<4x3xf64>
// CHECK:             arith.mulf %[[P]], %[[P]] : f64
// CHECK:         memref.dealloc %[[BUF]] : memref<4x3xf64>
// CHECK-NEXT:    func.return

// -----

// A push outside any loop becomes a rank-0 buffer; a loop with lb = 2 and step = 3 (trip
// count 3) stores at the normalized index (i - 2) / 3; index values keep their type.
func.func @norm_grad(%a: f64, %n: index) -> (f64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c11 = arith.constant 11 : index
  %scalar = tape.init : !tape.cache<f64>
  %idx = tape.init : !tape.cache<index>
  %e = math.exp %a : f64
  tape.push %scalar, %e : !tape.cache<f64>
  scf.for %i = %c2 to %c11 step %c3 {
    %m = arith.muli %i, %n : index
    tape.push %idx, %m : !tape.cache<index>
  } {tapeflow.loop = 7 : i64}
  %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %c0) -> (index) {
    %m = tape.pop %idx : !tape.cache<index>
    %a2 = arith.addi %acc, %m : index
    scf.yield %a2 : index
  } {tapeflow.loop = 7 : i64}
  %e2 = tape.pop %scalar : !tape.cache<f64>
  tape.free %idx : !tape.cache<index>
  tape.free %scalar : !tape.cache<f64>
  func.return %e2, %s : f64, index
}

// CHECK-LABEL: func.func @norm_grad
// CHECK:         %[[S:.*]] = memref.alloc() {tapeflow.tape} : memref<f64>
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() {tapeflow.tape} : memref<3xindex>
// CHECK-NEXT:    %[[E:.*]] = math.exp
// CHECK-NEXT:    memref.store %[[E]], %[[S]][] : memref<f64>
// CHECK-NEXT:    scf.for %[[I:.*]] = %c2 to %c11 step %c3 {
// CHECK-NEXT:      %[[SH:.*]] = arith.subi %[[I]], %c2 : index
// CHECK-NEXT:      %[[NI:.*]] = arith.divui %[[SH]], %c3 : index
// CHECK-NEXT:      %[[M:.*]] = arith.muli
// CHECK-NEXT:      memref.store %[[M]], %[[B]][%[[NI]]] : memref<3xindex>
// CHECK:         scf.for %[[K:.*]] = %c0 to %c3 step %c1
// CHECK-NEXT:      %[[L:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[R:.*]] = arith.subi %[[L]], %[[K]] : index
// CHECK-NEXT:      %{{.*}} = memref.load %[[B]][%[[R]]] : memref<3xindex>
// CHECK:         %[[E2:.*]] = memref.load %[[S]][] : memref<f64>
// CHECK-NEXT:    memref.dealloc %[[B]] : memref<3xindex>
// CHECK-NEXT:    memref.dealloc %[[S]] : memref<f64>
// CHECK-NEXT:    func.return %[[E2]], %s : f64, index

// -----

// The reverse loop is not in the contract's counter form (it counts down from 11 by 3),
// so the indexed layout does not apply: a stack of static capacity 3 keeps it correct.
func.func @not_mirrored(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c11 = arith.constant 11 : index
  %idx = tape.init : !tape.cache<index>
  scf.for %i = %c2 to %c11 step %c3 {
    tape.push %idx, %i : !tape.cache<index>
  } {tapeflow.loop = 7 : i64}
  %s = scf.for %k = %c2 to %c11 step %c3 iter_args(%acc = %c0) -> (index) {
    %m = tape.pop %idx : !tape.cache<index>
    %a2 = arith.addi %acc, %m : index
    scf.yield %a2 : index
  } {tapeflow.loop = 7 : i64}
  tape.free %idx : !tape.cache<index>
  func.return %s : index
}

// CHECK-LABEL: func.func @not_mirrored
// CHECK:         %[[B:.*]] = memref.alloc() {tapeflow.tape} : memref<3xindex>
// CHECK-NEXT:    %[[SP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK:         scf.for %[[I:.*]] = %c2 to %c11 step %c3 {
// CHECK-NEXT:      %[[N:.*]] = memref.load %[[SP]][] : memref<index>
// CHECK-NEXT:      memref.store %[[I]], %[[B]][%[[N]]] : memref<3xindex>
// CHECK:         scf.for
// CHECK-NEXT:      %[[N2:.*]] = memref.load %[[SP]][] : memref<index>
// CHECK-NOT:       cf.assert
// CHECK:           %[[TOP:.*]] = arith.subi %[[N2]], %{{.*}} : index
// CHECK-NEXT:      memref.store %[[TOP]], %[[SP]][] : memref<index>
// CHECK-NEXT:      %{{.*}} = memref.load %[[B]][%[[TOP]]] : memref<3xindex>
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}
