// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-stream{tile-bytes=24 depth=4}' | filecheck %s

// tapeflow-stream on unlayered regions strip-mines them itself, with tiles of
// floor(24 / record size) records: 3 records of f64 (not dividing the trip counts), 1 record
// of <f64, f32, i1>. Trip counts are dynamic, so the FIFOs are sized at run time and the
// prologue prefetches of the last 4 tiles are guarded (a tile index may be negative). Depth 4
// picks each tile's buffer among 4 by `g mod 4`. The inner region's tiles are numbered by
// the outer iteration (reconstructed from the outer, strip-mined loop) and the inner layer.
// The scf.while cache is left alone; the scf.if one is an optional field of a one-record
// region, which stays in DRAM.

func.func @nest_grad(%x: memref<7x5xf64>, %dx: memref<7x5xf64>, %n: index, %m: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %ta = tape.init : !tape.cache<f64>
  %tb = tape.init : !tape.cache<f64>
  %tc = tape.init : !tape.cache<i1>
  %td = tape.init : !tape.cache<f32>
  %te = tape.init : !tape.cache<f64>
  %tw = tape.init : !tape.cache<f64>
  %tx = tape.init : !tape.cache<f64>
  %ty = tape.init : !tape.cache<f64>
  scf.for %i = %c1 to %n step %c2 {
    %v0 = memref.load %x[%i, %c0] : memref<7x5xf64>
    tape.push %ta, %v0 : !tape.cache<f64>
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%i, %j] : memref<7x5xf64>
      %w = arith.mulf %v, %v0 : f64
      tape.push %tb, %w : !tape.cache<f64>
      %c = arith.cmpf olt, %w, %zero : f64
      tape.push %tc, %c : !tape.cache<i1>
      %f = arith.truncf %v : f64 to f32
      tape.push %td, %f : !tape.cache<f32>
      memref.store %w, %x[%i, %j] : memref<7x5xf64>
    } {tapeflow.loop = 1 : i64}
    %v1 = memref.load %x[%i, %c1] : memref<7x5xf64>
    tape.push %te, %v1 : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  // a second top-level loop (another region) and a while loop (left alone)
  scf.for %i = %c0 to %m step %c1 {
    %v = memref.load %x[%c0, %i] : memref<7x5xf64>
    tape.push %tw, %v : !tape.cache<f64>
  } {tapeflow.loop = 2 : i64}
  %wn = scf.while (%it = %c0) : (index) -> index {
    %cond = arith.cmpi slt, %it, %m : index
    scf.condition(%cond) %it : index
  } do {
  ^bb0(%it2: index):
    %v = memref.load %x[%c1, %it2] : memref<7x5xf64>
    tape.push %tx, %v : !tape.cache<f64>
    %nx = arith.addi %it2, %c1 : index
    scf.yield %nx : index
  }
  %cz = arith.cmpi sgt, %m, %c2 : index
  scf.if %cz {
    %v = memref.load %x[%c2, %c2] : memref<7x5xf64>
    tape.push %ty, %v : !tape.cache<f64>
  }
  // reverse
  %r0 = scf.if %cz -> (f64) {
    %v = tape.pop %ty : !tape.cache<f64>
    scf.yield %v : f64
  } else {
    scf.yield %zero : f64
  }
  %r1 = scf.for %k = %c0 to %wn step %c1 iter_args(%acc = %r0) -> (f64) {
    %v = tape.pop %tx : !tape.cache<f64>
    %a = arith.addf %acc, %v : f64
    scf.yield %a : f64
  }
  %r2 = scf.for %k = %c0 to %m step %c1 iter_args(%acc = %r1) -> (f64) {
    %v = tape.pop %tw : !tape.cache<f64>
    %kf = arith.index_cast %k : index to i64
    %kd = arith.sitofp %kf : i64 to f64
    %p = arith.mulf %v, %kd : f64
    %a = arith.addf %acc, %p : f64
    scf.yield %a : f64
  } {tapeflow.loop = 2 : i64}
  %t1 = arith.subi %n, %c1 : index
  %t2 = arith.addi %t1, %c2 : index
  %t3 = arith.subi %t2, %c1 : index
  %nt = arith.divsi %t3, %c2 : index
  %r3 = scf.for %k = %c0 to %nt step %c1 iter_args(%acc = %r2) -> (f64) {
    %e = tape.pop %te : !tape.cache<f64>
    %s0 = arith.mulf %acc, %e : f64
    %s1 = scf.for %kj = %c0 to %m step %c1 iter_args(%acc2 = %s0) -> (f64) {
      %f = tape.pop %td : !tape.cache<f32>
      %c = tape.pop %tc : !tape.cache<i1>
      %w = tape.pop %tb : !tape.cache<f64>
      %fd = arith.extf %f : f32 to f64
      %q = arith.select %c, %w, %fd : f64
      %q2 = arith.mulf %q, %acc2 : f64
      %q3 = arith.addf %q2, %w : f64
      scf.yield %q3 : f64
    } {tapeflow.loop = 1 : i64}
    %a = tape.pop %ta : !tape.cache<f64>
    %s2 = arith.addf %s1, %a : f64
    scf.yield %s2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %ta : !tape.cache<f64>
  tape.free %tb : !tape.cache<f64>
  tape.free %tc : !tape.cache<i1>
  tape.free %td : !tape.cache<f32>
  tape.free %te : !tape.cache<f64>
  tape.free %tw : !tape.cache<f64>
  tape.free %tx : !tape.cache<f64>
  tape.free %ty : !tape.cache<f64>
  func.return %r3 : f64
}

// CHECK-LABEL: func.func @nest_grad
// CHECK:         %[[FA:.*]] = stream.fifo_alloc(%{{.*}}) : !stream.fifo<!region.record<f64>, 3>
// CHECK-COUNT-4: region.alloc count = 3 : !region.tape<!region.record<f64>, #stream.spm>
// CHECK:         %[[FB:.*]] = stream.fifo_alloc(%{{.*}}) : !stream.fifo<!region.record<f64, f32, i1>, 1>
// CHECK-COUNT-4: region.alloc count = 1 : !region.tape<!region.record<f64, f32, i1>, #stream.spm>
// CHECK:         %[[FE:.*]] = stream.fifo_alloc(%{{.*}}) : !stream.fifo<!region.record<f64>, 3>
// CHECK:         scf.for
// CHECK:           arith.remsi %{{.*}}, %{{.*}} : index
// CHECK-COUNT-3:   arith.select {{.*}} : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      stream.acquire_write
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               stream.acquire_write %{{.*}} : !region.tape<!region.record<f64, f32, i1>, #stream.spm>
// CHECK:               stream.commit %{{.*}} -> %[[FB]][%{{.*}}]
// CHECK:           stream.commit %{{.*}} -> %[[FE]]
// CHECK:           stream.commit %{{.*}} -> %[[FA]]
// CHECK:         } {tapeflow.layer = 3 : i64}
// CHECK:         %[[T0:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    scf.if %[[T0]] {
// CHECK:           stream.prefetch %[[FA]][%{{.*}}] -> %{{.*}}
// CHECK:         scf.while
// CHECK:           tape.push %tx
// CHECK:         %[[Y:.*]] = region.alloc count = 1 : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %[[YV:.*]] = scf.if %cz -> (f64) {
// CHECK-NEXT:      memref.load
// CHECK:         region.write %[[Y]][%{{.*}}], %[[YV]] : !region.tape<!region.record<f64>>
// CHECK:         %r3 = scf.for
// CHECK:           stream.acquire_read
// CHECK:           stream.acquire_read
// CHECK:             stream.acquire_read %{{.*}} : !region.tape<!region.record<f64, f32, i1>, #stream.spm>
// CHECK:             region.read
// CHECK:             stream.release
// CHECK:           stream.release
// CHECK:           stream.release
// CHECK:         stream.fifo_dealloc %[[FA]]
// CHECK:         stream.fifo_dealloc %[[FB]]
// CHECK:         stream.fifo_dealloc %[[FE]]
// CHECK:         stream.fifo_dealloc
// CHECK-NOT:     {{^ *}}stream.
// CHECK:         tape.free %tx
