// RUN: tapeflow-opt %s -p 'tapeflow-lower-tape{assert-pops=true}' --split-input-file | filecheck %s

// A ragged nest: row i has counts[i] entries, loaded inside the nest, so the number of
// pushes is known only as the loops run. The cache grows as Enzyme's EnzymeToMemRef does ({elements, size,
// capacity}, the capacity doubled when full), starting at the capacity hint (4).
// With assert-pops=true each pop is guarded by cf.assert.
func.func @ragged_grad(%counts: memref<6xindex>, %x: memref<6x8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f64
  %cache = tape.init capacity = 4 : !tape.cache<f64>
  scf.for %i = %c0 to %c6 step %c1 {
    %m = memref.load %counts[%i] : memref<6xindex>
    scf.for %j = %c0 to %m step %c1 {
      %a = memref.load %x[%i, %j] : memref<6x8xf64>
      %p = math.exp %a : f64
      tape.push %cache, %p : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %s = scf.for %k = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> (f64) {
    %c5 = arith.constant 5 : index
    %i = arith.subi %c5, %k : index
    %n = memref.load %counts[%i] : memref<6xindex>
    %s2 = scf.for %l = %c0 to %n step %c1 iter_args(%acc2 = %acc) -> (f64) {
      %v = tape.pop %cache : !tape.cache<f64>
      %w = arith.mulf %v, %acc2 : f64
      %a3 = arith.addf %w, %v : f64
      scf.yield %a3 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %s2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %cache : !tape.cache<f64>
  func.return %s : f64
}

// CHECK-LABEL: func.func @ragged_grad
// CHECK:         %[[SLOT:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<memref<?xf64>>
// CHECK-NEXT:    %[[SIZE:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK-NEXT:    %[[CAP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK-NEXT:    %[[INIT:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc(%[[INIT]]) {tapeflow.tape} : memref<?xf64>
// CHECK-NEXT:    memref.store %[[BUF]], %[[SLOT]][] : memref<memref<?xf64>>
// CHECK:         scf.for
// CHECK:           %p = math.exp
// CHECK-NEXT:      %[[N:.*]] = memref.load %[[SIZE]][] : memref<index>
// CHECK-NEXT:      %[[C:.*]] = memref.load %[[CAP]][] : memref<index>
// CHECK-NEXT:      %[[FULL:.*]] = arith.cmpi sge, %[[N]], %[[C]] : index
// CHECK-NEXT:      scf.if %[[FULL]] {
// CHECK-NEXT:        %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:        %[[NC:.*]] = arith.muli %[[C]], %[[TWO]] : index
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:        %[[NEW:.*]] = memref.alloc(%[[NC]]) {tapeflow.tape} : memref<?xf64>
// CHECK:             scf.for %[[CI:.*]] = %{{.*}} to %[[N]] step
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[OLD]][%[[CI]]] : memref<?xf64>
// CHECK-NEXT:          memref.store %[[V]], %[[NEW]][%[[CI]]] : memref<?xf64>
// CHECK:             memref.dealloc %[[OLD]] : memref<?xf64>
// CHECK-NEXT:        memref.store %[[NEW]], %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:        memref.store %[[NC]], %[[CAP]][] : memref<index>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[CUR:.*]] = memref.load %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:      memref.store %p, %[[CUR]][%[[N]]] : memref<?xf64>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-NEXT:        %[[M:.*]] = memref.load %[[SIZE]][] : memref<index>
// CHECK-NEXT:        %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:        %[[OK:.*]] = arith.cmpi sgt, %[[M]], %[[Z]] : index
// CHECK-NEXT:        cf.assert %[[OK]], "{{.*}}growable.mlir:{{[0-9]+}}:7: 'tape.pop' pop on empty cache"
// CHECK:         memref.dealloc %[[SLOT]] : memref<memref<?xf64>>
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}

// -----

// scf.while: the iteration count is data dependent; an index value is cached per
// iteration (no hint: initial capacity 16).
func.func @while_grad(%x: f64) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %cache = tape.init : !tape.cache<index>
  %r = scf.while (%i = %c0) : (index) -> index {
    %go = arith.cmpi slt, %i, %c10 : index
    scf.condition(%go) %i : index
  } do {
  ^bb0(%i: index):
    tape.push %cache, %i : !tape.cache<index>
    %i1 = arith.addi %i, %c1 : index
    scf.yield %i1 : index
  }
  %s = scf.for %k = %c0 to %r step %c1 iter_args(%acc = %c0) -> (index) {
    %v = tape.pop %cache : !tape.cache<index>
    %a2 = arith.addi %acc, %v : index
    scf.yield %a2 : index
  }
  tape.free %cache : !tape.cache<index>
  func.return %s : index
}

// CHECK-LABEL: func.func @while_grad
// CHECK:         %[[SLOT:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<memref<?xindex>>
// CHECK:         arith.constant 16 : index
// CHECK:         scf.while
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xindex>
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}
