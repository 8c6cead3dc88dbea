// Bad options and inputs the stream pass cannot handle: an error naming the op and its
// location where there is one, a non-zero exit, no traceback, no output.

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream{depth=0}' 2>&1 | filecheck %s --check-prefix=DEPTH
// DEPTH: error: pass-pipeline:1:{{[0-9]+}}: tapeflow-stream: option depth must be >= 1, got 0
// DEPTH-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream{tile-bytes=-1}' 2>&1 | filecheck %s --check-prefix=NEG
// NEG: error: pass-pipeline:1:{{[0-9]+}}: tapeflow-stream: option tile-bytes must be >= 0, got -1

// Regions not layered, and no tile size given.
// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-stream' 2>&1 | filecheck %s --check-prefix=UNLAYERED
// UNLAYERED: error: {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: 'region.alloc' region tape is not layered: run tapeflow-layers first or give tapeflow-stream a tile-bytes option
// UNLAYERED-NOT: Traceback

// A tile smaller than one 16-byte record.
// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-stream{tile-bytes=8}' 2>&1 | filecheck %s --check-prefix=TILE
// TILE: error: {{.*}}'region.alloc' tile-bytes=8 is too small for one record: a tile needs at least 16 bytes

// Layers of 2 records (32 bytes), but tiles of at most 16 bytes.
// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream{tile-bytes=16}' 2>&1 | filecheck %s --check-prefix=LAYER
// LAYER: error: {{.*}}a layer's tile is 2 records x 16 bytes = 32 bytes, more than tile-bytes=16; run tapeflow-layers with tile-bytes=16

// Depth 4 does not fit the 64 bytes tapeflow-layers granted for depth 2.
// RUN: not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream{depth=4}' 2>&1 | filecheck %s --check-prefix=SHARE
// SHARE: error: {{.*}}depth 4 needs 128 scratchpad bytes (4 x 2 x 16) but tapeflow-layers granted 64; run it with depth=4
// SHARE-NOT: Traceback

// RUN: rm -f %t.out && not tapeflow-opt %s -p 'tapeflow-regions,tapeflow-stream' -o %t.out 2>/dev/null
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
