// Bad options and a scratchpad too small: an error, a non-zero exit, no traceback.

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: error: pass-pipeline:1:{{[0-9]+}}: tapeflow-layers: option spm-bytes must be >= 1, got 0
// ZERO-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=-5}' 2>&1 | filecheck %s --check-prefix=NEG
// NEG: error: pass-pipeline:1:{{[0-9]+}}: tapeflow-layers: option spm-bytes must be >= 1, got -5

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=100 depth=0}' 2>&1 | filecheck %s --check-prefix=DEPTH
// DEPTH: error: pass-pipeline:1:{{[0-9]+}}: tapeflow-layers: option depth must be >= 1, got 0

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=31}' 2>&1 | filecheck %s --check-prefix=SMALL
// SMALL: error: {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: 'func.func' scratchpad of 31 bytes is too small for @f_grad: 1 region(s) need at least 32 bytes (depth 2 x one record of each region: 16 bytes)
// SMALL-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=79 depth=5}' 2>&1 | filecheck %s --check-prefix=DEEP
// DEEP: error: {{.*}}scratchpad of 79 bytes is too small for @f_grad: 1 region(s) need at least 80 bytes (depth 5

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=4096 tile-bytes=8}' 2>&1 | filecheck %s --check-prefix=TILE
// TILE: error: {{.*}}tile-bytes=8 is too small for one record: @f_grad needs at least 16 bytes per tile

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm_bytes=abc}' 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: error: {{.*}}
// TYPE-NOT: Traceback

// Nothing is written on failure.
// RUN: rm -f %t.out && not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=31}' -o %t.out 2>/dev/null
// RUN: not test -e %t.out

func.func @f_grad(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  %u = tape.init : !tape.cache<i1>
  %w = tape.init : !tape.cache<f32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    tape.push %t, %v : !tape.cache<f64>
    %b = arith.cmpf ogt, %v, %z : f64
    tape.push %u, %b : !tape.cache<i1>
    %f = arith.truncf %v : f64 to f32
    tape.push %w, %f : !tape.cache<f32>
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %f = tape.pop %w : !tape.cache<f32>
    %b = tape.pop %u : !tape.cache<i1>
    %v = tape.pop %t : !tape.cache<f64>
    %s = arith.select %b, %v, %z : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  tape.free %u : !tape.cache<i1>
  tape.free %w : !tape.cache<f32>
  func.return %r : f64
}
