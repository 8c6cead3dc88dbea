// Tiles over spanned loops (issue #10 item 6). Region A pushes in a 2-iteration inner
// loop, region B in a 12-iteration one, both inside the same 6-iteration outer loop;
// 512 bytes at depth 2 give 16-record tiles. A's tile holds whole runs of its inner loop,
// so tapeflow-layers strip-mines the OUTER loop for A (layers of 6 outer iterations: one
// 12-record tile), while B's inner loop is strip-mined inside it as before (one 12-record
// tile per outer iteration, numbered by the outer iteration). In A's tile the record of
// (i, j) sits at (i - start) * 2 + j, read back in reverse order; both regions' gradients
// equal those of the input, bit for bit, at depths 1 to 3.

// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=512},tapeflow-stream' | filecheck %s
// RUN: tapeflow-run %s --entry two_grad > %t.ref
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=256 depth=1},tapeflow-stream{depth=1}' | tapeflow-run - --entry two_grad > %t.d1
// RUN: diff %t.ref %t.d1
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=512},tapeflow-stream' | tapeflow-run - --entry two_grad > %t.d2
// RUN: diff %t.ref %t.d2
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=768 depth=3},tapeflow-stream{depth=3}' | tapeflow-run - --entry two_grad > %t.d3
// RUN: diff %t.ref %t.d3

func.func @two_grad(%x: memref<6x2xf64>, %y: memref<6x12xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c12 = arith.constant 12 : index
  %z = arith.constant 0.0 : f64
  %ta = tape.init : !tape.cache<f64>
  %tb = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c6 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %x[%i, %j] : memref<6x2xf64>
      %w = math.tanh %v : f64
      tape.push %ta, %w : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
    scf.for %k = %c0 to %c12 step %c1 {
      %v = memref.load %y[%i, %k] : memref<6x12xf64>
      %w = math.sin %v : f64
      tape.push %tb, %w : !tape.cache<f64>
    } {tapeflow.loop = 2 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %ri = %c0 to %c6 step %c1 iter_args(%a = %z) -> (f64) {
    %rk = scf.for %kk = %c0 to %c12 step %c1 iter_args(%b = %a) -> (f64) {
      %w = tape.pop %tb : !tape.cache<f64>
      %kf = arith.index_cast %kk : index to i64
      %kd = arith.sitofp %kf : i64 to f64
      %p = arith.mulf %w, %kd : f64
      %b2 = arith.addf %b, %p : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 2 : i64}
    %rj = scf.for %kj = %c0 to %c2 step %c1 iter_args(%b = %rk) -> (f64) {
      %w = tape.pop %ta : !tape.cache<f64>
      %b1 = arith.mulf %b, %w : f64
      %b2 = arith.addf %b1, %w : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %rj : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %ta : !tape.cache<f64>
  tape.free %tb : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @two_grad
// CHECK:         %[[FA:.*]] = stream.fifo_alloc tiles = 1 : !stream.fifo<!region.record<f64>, 12>
// CHECK:         %[[FB:.*]] = stream.fifo_alloc tiles = 6 : !stream.fifo<!region.record<f64>, 12>
// CHECK:         scf.for %[[START:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           stream.acquire_write %[[BA:.*]] :
// CHECK-NEXT:      scf.for %i = %[[START]] to %{{.*}} step %c1 {
// CHECK:             %[[ROW:.*]] = arith.subi %i, %[[START]] : index
// CHECK:             %[[ROW2:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        scf.for %j = %c0 to %c2 step %c1 {
// CHECK-NEXT:          %[[W:.*]] = arith.addi %[[ROW2]], %j : index
// CHECK:               region.write %[[BA]][%[[W]]], %w
// CHECK:             stream.acquire_write
// CHECK-NEXT:        scf.for %k =
// CHECK:               region.write
// CHECK:             stream.commit %{{.*}} -> %[[FB]]
// CHECK:           } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:      stream.commit %[[BA]] -> %[[FA]]
// CHECK:         } {tapeflow.layer = 6 : i64}
