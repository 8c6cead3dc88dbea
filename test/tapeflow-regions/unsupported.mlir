// RUN: tapeflow-opt %s --split-input-file --tapeflow-regions | filecheck %s

// Caches the pass leaves as tape.cache (documented in transforms/regions.py).

// Two pushes of one cache per iteration: not one field per record.
func.func @two_pushes(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    tape.push %t, %v : !tape.cache<f64>
    tape.push %t, %v : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %p = tape.pop %t : !tape.cache<f64>
    %q = tape.pop %t : !tape.cache<f64>
    %s = arith.addf %p, %q : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}
// CHECK-LABEL: func.func @two_pushes
// CHECK-NOT:     region.
// CHECK:         tape.push %t, %v
// CHECK-NEXT:    tape.push %t, %v

// -----

// A triangular nest: the inner trip count changes with the outer iteration. Once left
// alone, now a ragged region (test/tapeflow-regions/ragged.mlir): 0 + 1 + 2 + 3 records.
func.func @triangular(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %i step %c1 {
      %v = memref.load %x[%j] : memref<4xf64>
      tape.push %t, %v : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %i = arith.subi %c4, %k : index
    %i1 = arith.subi %i, %c1 : index
    %r2 = scf.for %kj = %c0 to %i1 step %c1 iter_args(%b = %a) -> (f64) {
      %p = tape.pop %t : !tape.cache<f64>
      %b2 = arith.addf %b, %p : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %r2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}
// CHECK-LABEL: func.func @triangular
// CHECK-NOT:     tape.
// CHECK:         region.alloc count = 6 {tapeflow.ragged}

// -----

// Forward and reverse loops whose tapeflow.loop ids do not match.
func.func @mismatch(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    tape.push %t, %v : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %p = tape.pop %t : !tape.cache<f64>
    %a2 = arith.addf %a, %p : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 7 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}
// CHECK-LABEL: func.func @mismatch
// CHECK-NOT:     region.
// CHECK:         tape.push %t, %v
