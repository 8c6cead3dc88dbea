// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=200}' | filecheck %s

// Budget split: the four loop regions of @nest_grad (records of 8, 16, 8 and 8 bytes) share
// the 200-byte scratchpad as if all were live at once; with depth 2 each layer holds
// floor(200 / (2 x 40)) = 2 records of every region, and region r is granted
// 2 x 2 x size_r bytes. Trip counts are dynamic (%n, %m): the layer counts are computed at
// run time, and the nested inner loop is strip-mined inside the (strip-mined) outer loop.
// The scf.while loop (its cache stays a tape.cache) is left alone.

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
// CHECK:         region.alloc(%{{.*}}) {tapeflow.layer_records = 2 : i64, tapeflow.spm_bytes = 32 : i64} : !region.tape<!region.record<f64>>
// CHECK:         region.alloc(%{{.*}}) {tapeflow.layer_records = 2 : i64, tapeflow.spm_bytes = 64 : i64} : !region.tape<!region.record<f64, f32, i1>>
// CHECK:         region.alloc(%{{.*}}) {tapeflow.layer_records = 2 : i64, tapeflow.spm_bytes = 32 : i64} : !region.tape<!region.record<f64>>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[NO:.*]] step %[[L:.*]] {
// CHECK:           scf.for %i = %{{.*}} to %{{.*}} step %c2 {
// CHECK:             scf.for %{{.*}} = %{{.*}} to %[[NI:.*]] step %[[LI:.*]] {
// CHECK:               scf.for %j = %{{.*}} to %{{.*}} step %c1 {
// CHECK:                 region.write
// CHECK:               } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:        } {tapeflow.layer = 2 : i64}
// CHECK:           } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    } {tapeflow.layer = 2 : i64}
// CHECK:         region.alloc(%{{.*}}) {tapeflow.layer_records = 2 : i64, tapeflow.spm_bytes = 32 : i64} : !region.tape<!region.record<f64>>
// CHECK:         } {tapeflow.layer = 2 : i64}
// CHECK:         scf.while
// CHECK:         %r1 = scf.for %k = %c0 to %wn step %c1
// CHECK-NOT:     tapeflow.layer
// CHECK:         %r2 = scf.for
// CHECK:         } {tapeflow.layer = 2 : i64}
// CHECK:         %r3 = scf.for %{{.*}} = %{{.*}} to %[[NO]] step %[[L]]
// CHECK:           scf.for %k_2 = %{{.*}} to %{{.*}} step %c1
// CHECK:             scf.for %{{.*}} = %{{.*}} to %[[NI]] step %[[LI]]
// CHECK:               scf.for %kj = %{{.*}} to %{{.*}} step %c1
// CHECK:                 region.read
// CHECK:               } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:          scf.yield
// CHECK-NEXT:        } {tapeflow.layer = 2 : i64}
// CHECK:           } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } {tapeflow.layer = 2 : i64}
