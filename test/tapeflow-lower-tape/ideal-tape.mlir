// RUN: tapeflow-opt %s -p 'tapeflow-lower-tape{ideal_tape=true}' --split-input-file | filecheck %s

// The ideal tape (gem5-SALAM's "ad"): the cached values' loads and stores carry
// tapeflow.ideal_tape, which the hardware model counts without a memory access; a stack's
// bookkeeping (its pointer; a growable stack's size, capacity and slot) does not.
// Indexed layout: the push's store and the pop's load.
func.func @indexed(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %cache = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xf64>
    tape.push %cache, %a : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  %s = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = tape.pop %cache : !tape.cache<f64>
    %w = arith.addf %v, %acc : f64
    scf.yield %w : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %cache : !tape.cache<f64>
  func.return %s : f64
}

// CHECK-LABEL: func.func @indexed
// CHECK:         %[[T:.*]] = memref.alloc() {tapeflow.tape} : memref<4xf64>
// CHECK:           %[[A:.*]] = memref.load %x[%i] : memref<4xf64>
// CHECK-NEXT:      memref.store %[[A]], %[[T]][%i] {tapeflow.ideal_tape} : memref<4xf64>
// CHECK:           %v = memref.load %[[T]][%{{.*}}] {tapeflow.ideal_tape} : memref<4xf64>

// -----

// A stack sized at run time (two pushes an iteration, so not indexed by the counter): the
// values' stores and loads are tagged, the stack pointer's loads and stores are not.
func.func @stack(%counts: memref<2xindex>, %x: memref<8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %cache = tape.init capacity = 2 : !tape.cache<f64>
  %m = memref.load %counts[%c0] : memref<2xindex>
  scf.for %j = %c0 to %m step %c1 {
    %a = memref.load %x[%j] : memref<8xf64>
    tape.push %cache, %a : !tape.cache<f64>
    tape.push %cache, %a : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  %n = memref.load %counts[%c0] : memref<2xindex>
  %s = scf.for %l = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = tape.pop %cache : !tape.cache<f64>
    %u = tape.pop %cache : !tape.cache<f64>
    %vu = arith.addf %v, %u : f64
    %w = arith.addf %vu, %acc : f64
    scf.yield %w : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %cache : !tape.cache<f64>
  func.return %s : f64
}

// CHECK-LABEL: func.func @stack
// CHECK:         %[[T:.*]] = memref.alloc(%{{.*}}) {tapeflow.tape} : memref<?xf64>
// CHECK-NEXT:    %[[SP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK:           %[[N:.*]] = memref.load %[[SP]][] : memref<index>
// CHECK-NEXT:      memref.store %{{.*}}, %[[T]][%[[N]]] {tapeflow.ideal_tape} : memref<?xf64>
// CHECK:           memref.store %{{.*}}, %[[SP]][] : memref<index>
// CHECK:           %v = memref.load %[[T]][%{{.*}}] {tapeflow.ideal_tape} : memref<?xf64>
