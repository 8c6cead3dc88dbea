// RUN: tapeflow-opt %s --tapeflow-regions | filecheck %s

// Nested loops with dynamic trip counts (outer: %n from 1 step 2, inner: %m), pushes in
// the outer body before and after the inner loop (two straight-line stretches of one
// iteration: two regions), pushes in the inner body (one record per inner iteration,
// indexed by the linearized (outer, inner) iteration), a second top-level loop, a cache
// the pass leaves alone (a push in scf.while: data-dependent count) and one under scf.if
// (an optional field of a one-record region: yielded out of the branch, a zero otherwise).

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
// CHECK:         %tx = tape.init : !tape.cache<f64>
// CHECK-NOT:     %ty = tape.init
// CHECK:         %[[DIV:.*]] = arith.shrsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpi sgt, %[[DIV]], %{{.*}} : index
// CHECK-NEXT:    %[[NO:.*]] = arith.select %[[POS]], %[[DIV]], %{{.*}} : index
// CHECK-NEXT:    %[[A:.*]] = region.alloc(%[[NO]]) : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %{{.*}} = arith.cmpi sgt, %m, %{{.*}} : index
// CHECK-NEXT:    %[[NI:.*]] = arith.select %{{.*}}, %m, %{{.*}} : index
// CHECK-NEXT:    %[[NN:.*]] = arith.muli %[[NO]], %[[NI]] : index
// CHECK-NEXT:    %[[B:.*]] = region.alloc(%[[NN]]) : !region.tape<!region.record<f64, f32, i1>>
// CHECK-NEXT:    %[[E:.*]] = region.alloc(%[[NO]]) : !region.tape<!region.record<f64>>
// CHECK-NEXT:    scf.for %i = %c1 to %n step %c2 {
// CHECK-NEXT:      %[[S:.*]] = arith.subi %i, %c1 : index
// CHECK-NEXT:      %[[IO:.*]] = arith.shrsi %[[S]], %{{.*}} : index
// CHECK-NEXT:      %v0 = memref.load
// CHECK-NEXT:      region.write %[[A]][%[[IO]]], %v0
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[IO]], %[[NI]] : index
// CHECK-NEXT:      scf.for %j = %c0 to %m step %c1 {
// CHECK-NEXT:        %[[L:.*]] = arith.addi %[[M]], %j : index
// CHECK:             region.write %[[B]][%[[L]]], %w, %f, %c : !region.tape<!region.record<f64, f32, i1>>
// CHECK:           } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:      %v1 = memref.load
// CHECK-NEXT:      region.write %[[E]][%[[IO]]], %v1
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK:         %[[W:.*]] = region.alloc(%{{.*}}) : !region.tape<!region.record<f64>>
// CHECK-NEXT:    scf.for %i_1 = %c0 to %m step %c1 {
// CHECK:           region.write %[[W]][%i_1]
// CHECK:         scf.while
// CHECK:           tape.push %tx, %{{.*}} : !tape.cache<f64>
// CHECK:         %[[Y:.*]] = region.alloc count = 1 : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %[[YV:.*]] = scf.if %cz -> (f64) {
// CHECK-NEXT:      %[[V:.*]] = memref.load %x[%c2, %c2] : memref<7x5xf64>
// CHECK-NEXT:      scf.yield %[[V]] : f64
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:      scf.yield %[[Z]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    region.write %[[Y]][%{{.*}}], %[[YV]] : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %[[YR:.*]] = region.read %[[Y]][%{{.*}}] : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %r0 = scf.if %cz -> (f64) {
// CHECK-NEXT:      scf.yield %[[YR]] : f64
// CHECK:         tape.pop %tx
// CHECK:         region.read %[[W]]
// CHECK:         %[[RO0:.*]] = arith.subi %[[NO]], %{{.*}} : index
// CHECK:         %r3 = scf.for %k_2 = %c0 to %nt step %c1 iter_args(%acc_2 = %r2) -> (f64) {
// CHECK-NEXT:      %[[RO:.*]] = arith.subi %[[RO0]], %k_2 : index
// CHECK-NEXT:      %e = region.read %[[E]][%[[RO]]] : !region.tape<!region.record<f64>>
// CHECK-NEXT:      %s0 = arith.mulf %acc_2, %e : f64
// CHECK-NEXT:      %[[RM:.*]] = arith.muli %[[RO]], %[[NI]] : index
// CHECK-NEXT:      %[[NI1:.*]] = arith.subi %[[NI]], %{{.*}} : index
// CHECK-NEXT:      %[[RB:.*]] = arith.addi %[[RM]], %[[NI1]] : index
// CHECK-NEXT:      scf.for %kj = %c0 to %m step %c1
// CHECK-NEXT:        %[[RL:.*]] = arith.subi %[[RB]], %kj : index
// CHECK-NEXT:        %w_1, %f_1, %c_1 = region.read %[[B]][%[[RL]]] : !region.tape<!region.record<f64, f32, i1>>
// CHECK:           } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:      %a_2 = region.read %[[A]][%[[RO]]] : !region.tape<!region.record<f64>>
// CHECK:         } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    region.dealloc %[[A]]
// CHECK-NEXT:    region.dealloc %[[B]]
// CHECK-NEXT:    region.dealloc %[[E]]
// CHECK-NEXT:    region.dealloc %[[W]]
// CHECK-NEXT:    tape.free %tx : !tape.cache<f64>
// CHECK-NEXT:    region.dealloc %[[Y]] : !region.tape<!region.record<f64>>
