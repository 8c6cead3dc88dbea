// RUN: tapeflow-opt %s -p tapeflow-regions,tapeflow-lower-regions | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream' | not tapeflow-opt --tapeflow-lower-regions 2>&1 | filecheck %s --check-prefix=SPM

// "Regions only": region tapes stay contiguous DRAM record buffers (their size in bytes
// recorded when known), and the caches tapeflow-regions leaves alone (here: a push under
// scf.if) get the baseline lowering, so no tape op is left.

func.func @f_grad(%x: memref<6xf64>, %dx: memref<6xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  %u = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %x[%i] : memref<6xf64>
    %w = arith.mulf %v, %v : f64
    tape.push %t, %w : !tape.cache<f64>
    %pos = arith.cmpf ogt, %v, %z : f64
    scf.if %pos {
      tape.push %u, %v : !tape.cache<f64>
    }
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c6 step %c1 iter_args(%a = %z) -> (f64) {
    %w = tape.pop %t : !tape.cache<f64>
    %a2 = arith.addf %a, %w : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  tape.free %u : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @f_grad
// CHECK-NOT:     tape.
// CHECK:         %[[T:.*]] = region.alloc count = 6 {tapeflow.bytes = 48 : i64} : !region.tape<!region.record<f64>>
// CHECK:         scf.for %i
// CHECK:           region.write %[[T]][%i], %w
// CHECK:           scf.if %pos {
// CHECK-NEXT:        %[[SP:.*]] = memref.load
// CHECK-NEXT:        memref.store %v, %{{.*}}[%[[SP]]]
// CHECK:         region.read %[[T]]
// CHECK:         region.dealloc %[[T]]
// CHECK-NOT:     tape.

// SPM: error: {{.*}}'region.alloc' is a scratchpad buffer: tapeflow-lower-regions runs on the output of tapeflow-regions
// SPM-NOT: Traceback
