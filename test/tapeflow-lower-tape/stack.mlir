// RUN: tapeflow-opt %s -p tapeflow-lower-tape --split-input-file | filecheck %s

// A push under scf.if inside a loop of constant trip count: the number of pushes is only
// bounded (8), so the cache is a packed stack of static capacity 8 with a stack pointer.
func.func @cond_grad(%x: memref<8xf64>, %dx: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f64
  %cache = tape.init : !tape.cache<f64>
  %conds = tape.init : !tape.cache<i1>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf64>
    %p = arith.cmpf ogt, %v, %zero : f64
    tape.push %conds, %p : !tape.cache<i1>
    scf.if %p {
      %e = math.exp %v : f64
      tape.push %cache, %e : !tape.cache<f64>
      memref.store %e, %x[%i] : memref<8xf64>
    }
  } {tapeflow.loop = 0 : i64}
  scf.for %k = %c0 to %c8 step %c1 {
    %p = tape.pop %conds : !tape.cache<i1>
    %c7 = arith.constant 7 : index
    %i = arith.subi %c7, %k : index
    scf.if %p {
      %e = tape.pop %cache : !tape.cache<f64>
      %d = memref.load %dx[%i] : memref<8xf64>
      %de = arith.mulf %d, %e : f64
      memref.store %de, %dx[%i] : memref<8xf64>
    }
  } {tapeflow.loop = 0 : i64}
  tape.free %conds : !tape.cache<i1>
  tape.free %cache : !tape.cache<f64>
  func.return
}

// The i1 cache has one unconditional push: indexed, stored as memref<8xi1>.
// CHECK-LABEL: func.func @cond_grad
// CHECK:         %[[B:.*]] = memref.alloc() {tapeflow.tape} : memref<8xf64>
// CHECK-NEXT:    %[[SP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[Z]], %[[SP]][] : memref<index>
// CHECK-NEXT:    %[[C:.*]] = memref.alloc() {tapeflow.tape} : memref<8xi1>
// CHECK:           memref.store %p, %[[C]][%i] : memref<8xi1>
// CHECK-NEXT:      scf.if %p {
// CHECK-NEXT:        %[[E:.*]] = math.exp
// CHECK-NEXT:        %[[N:.*]] = memref.load %[[SP]][] : memref<index>
// CHECK-NEXT:        memref.store %[[E]], %[[B]][%[[N]]] : memref<8xf64>
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:        %[[N1:.*]] = arith.addi %[[N]], %[[ONE]] : index
// CHECK-NEXT:        memref.store %[[N1]], %[[SP]][] : memref<index>
// CHECK:         scf.for %[[K:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:      %[[L:.*]] = arith.constant 7 : index
// CHECK-NEXT:      %[[R:.*]] = arith.subi %[[L]], %[[K]] : index
// CHECK-NEXT:      %[[P:.*]] = memref.load %[[C]][%[[R]]] : memref<8xi1>
// CHECK:           scf.if %[[P]] {
// CHECK-NEXT:        %[[M:.*]] = memref.load %[[SP]][] : memref<index>
// CHECK-NOT:         cf.assert
// CHECK:             %[[TOP:.*]] = arith.subi %[[M]]
// CHECK-NEXT:        memref.store %[[TOP]], %[[SP]][] : memref<index>
// CHECK-NEXT:        %{{.*}} = memref.load %[[B]][%[[TOP]]] : memref<8xf64>
// CHECK:         memref.dealloc %[[C]] : memref<8xi1>
// CHECK-NEXT:    memref.dealloc %[[B]] : memref<8xf64>
// CHECK-NEXT:    memref.dealloc %[[SP]] : memref<index>
// CHECK-NEXT:    func.return

// -----

// Two push sites for one cache (one before the loop, one in it): a stack of capacity 1 + 5.
func.func @two_sites(%a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %cache = tape.init : !tape.cache<f64>
  tape.push %cache, %a : !tape.cache<f64>
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%s = %a) -> (f64) {
    %s2 = arith.mulf %s, %s : f64
    tape.push %cache, %s : !tape.cache<f64>
    scf.yield %s2 : f64
  } {tapeflow.loop = 0 : i64}
  %acc = scf.for %k = %c0 to %c5 step %c1 iter_args(%t = %a) -> (f64) {
    %s = tape.pop %cache : !tape.cache<f64>
    %t2 = arith.addf %t, %s : f64
    scf.yield %t2 : f64
  } {tapeflow.loop = 0 : i64}
  %first = tape.pop %cache : !tape.cache<f64>
  %sum = arith.addf %acc, %first : f64
  tape.free %cache : !tape.cache<f64>
  func.return %sum : f64
}

// CHECK-LABEL: func.func @two_sites
// CHECK:         %[[B:.*]] = memref.alloc() {tapeflow.tape} : memref<6xf64>
// CHECK-NEXT:    %[[SP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}
// CHECK:         memref.dealloc %[[B]] : memref<6xf64>
// CHECK-NEXT:    memref.dealloc %[[SP]] : memref<index>

// -----


// A triangular nest: the inner loop starts at i+1 (i in [0, 5]): 5 + 4 + ... + 0 = 15
// pushes, counted exactly at compile time (the worst-case bound 6 * 5 = 30 would reserve
// twice the tape): a stack of static capacity 15.
func.func @tri_grad(%x: memref<6xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f64
  %cache = tape.init capacity = 4 : !tape.cache<f64>
  scf.for %i = %c0 to %c6 step %c1 {
    %i1 = arith.addi %i, %c1 : index
    scf.for %j = %i1 to %c6 step %c1 {
      %a = memref.load %x[%i] : memref<6xf64>
      %b = memref.load %x[%j] : memref<6xf64>
      %p = arith.mulf %a, %b : f64
      tape.push %cache, %p : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %s = scf.for %k = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> (f64) {
    %c5 = arith.constant 5 : index
    %i = arith.subi %c5, %k : index
    %i1 = arith.addi %i, %c1 : index
    %n = arith.subi %c6, %i1 : index
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

// CHECK-LABEL: func.func @tri_grad
// CHECK:         %[[B:.*]] = memref.alloc() {tapeflow.tape} : memref<15xf64>
// CHECK-NEXT:    %[[SP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK-NOT:     cf.assert
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}
