// A growable record tape: `region.reserve` grows a tape that holds fewer records than
// asked (to twice its records, or to the count when that is more) and keeps the records
// written; lowered to upstream dialects, each field buffer sits in a slot and is replaced
// by a larger copy.

// RUN: tapeflow-run %s --entry grow --args 5 | filecheck %s --check-prefix=OUT
// RUN: tapeflow-opt %s -p tapeflow-lower-to-std | tapeflow-run - --entry grow --args 5 | filecheck %s --check-prefix=OUT
// RUN: tapeflow-opt %s -p tapeflow-lower-to-std | filecheck %s --check-prefix=LOWER

// Records 0..n-1 hold (i, i * 0.5), the tape starting with one record; the sum of the
// fields read back in reverse is n(n-1)/2 * 1.5 (15 for n = 5) and the last index 4.
func.func @grow(%n: index) -> (f64, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %t = region.alloc count = 1 : !region.tape<!region.record<f64, index>>
  scf.for %i = %c0 to %n step %c1 {
    %need = arith.addi %i, %c1 : index
    region.reserve %t, %need : !region.tape<!region.record<f64, index>>
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %h = arith.mulf %f, %half : f64
    region.write %t[%i], %h, %i : !region.tape<!region.record<f64, index>>
  }
  %s, %last = scf.for %k = %c0 to %n step %c1 iter_args(%a = %z, %m = %c0) -> (f64, index) {
    %nm1 = arith.subi %n, %c1 : index
    %j = arith.subi %nm1, %k : index
    %h, %i = region.read %t[%j] : !region.tape<!region.record<f64, index>>
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %a1 = arith.addf %a, %h : f64
    %a2 = arith.addf %a1, %f : f64
    %m2 = arith.maxui %m, %i : index
    scf.yield %a2, %m2 : f64, index
  }
  region.dealloc %t : !region.tape<!region.record<f64, index>>
  func.return %s, %last : f64, index
}
// OUT: result[0]: f64 = 15.0
// OUT-NEXT: result[1]: index = 4

// LOWER:      %[[CAP:.*]] = memref.load %[[CAPACITY:.*]][] : memref<index>
// LOWER:      %[[DOUBLE:.*]] = arith.muli %[[CAP]], %{{.*}} : index
// LOWER:      memref.alloc(%{{.*}}) : memref<?xf64>
// LOWER:      memref.dealloc %{{.*}} : memref<?xf64>
// LOWER:      memref.alloc(%{{.*}}) : memref<?xindex>
// LOWER:      memref.dealloc %{{.*}} : memref<?xindex>
// LOWER:      memref.store %{{.*}}, %[[CAPACITY]][] : memref<index>
// LOWER-NOT:  region.
