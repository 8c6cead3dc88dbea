// RUN: tapeflow-opt %s --tapeflow-regions | filecheck %s
// RUN: tapeflow-opt %s -p tapeflow-regions | tapeflow-opt | filecheck %s

// One loop pushing f64, f32, i1 and index values, plus one straight-line push before the
// loop. The loop's four caches become one record per iteration, its fields sorted by
// decreasing alignment (f64, index, f32, i1: no padding between fields); the straight-line
// push becomes a one-record tape.

func.func @f_grad(%x: memref<10xf64>, %dx: memref<10xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %cst0 = arith.constant 0.0 : f64
  %t0 = tape.init : !tape.cache<f64>
  %t1 = tape.init : !tape.cache<f32>
  %t2 = tape.init : !tape.cache<i1>
  %t3 = tape.init : !tape.cache<index>
  %t4 = tape.init : !tape.cache<f64>
  %sq = arith.mulf %s, %s : f64
  tape.push %t4, %sq : !tape.cache<f64>
  scf.for %i = %c0 to %c10 step %c1 {
    %v = memref.load %x[%i] : memref<10xf64>
    %y = arith.mulf %v, %sq : f64
    tape.push %t0, %y : !tape.cache<f64>
    %yf = arith.truncf %y : f64 to f32
    tape.push %t1, %yf : !tape.cache<f32>
    %b = arith.cmpf ogt, %y, %cst0 : f64
    tape.push %t2, %b : !tape.cache<i1>
    %j = arith.addi %i, %c1 : index
    tape.push %t3, %j : !tape.cache<index>
    memref.store %y, %x[%i] : memref<10xf64>
  } {tapeflow.loop = 0 : i64}
  %acc0 = arith.constant 0.0 : f64
  %r = scf.for %k = %c0 to %c10 step %c1 iter_args(%acc = %acc0) -> (f64) {
    %j = tape.pop %t3 : !tape.cache<index>
    %b = tape.pop %t2 : !tape.cache<i1>
    %yf = tape.pop %t1 : !tape.cache<f32>
    %y = tape.pop %t0 : !tape.cache<f64>
    %yd = arith.extf %yf : f32 to f64
    %z = arith.addf %y, %yd : f64
    %zz = arith.select %b, %z, %y : f64
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f64
    %w = arith.mulf %zz, %jf : f64
    %a = arith.addf %acc, %w : f64
    scf.yield %a : f64
  } {tapeflow.loop = 0 : i64}
  %sq2 = tape.pop %t4 : !tape.cache<f64>
  %res = arith.mulf %r, %sq2 : f64
  tape.free %t0 : !tape.cache<f64>
  tape.free %t1 : !tape.cache<f32>
  tape.free %t2 : !tape.cache<i1>
  tape.free %t3 : !tape.cache<index>
  tape.free %t4 : !tape.cache<f64>
  func.return %res : f64
}

// CHECK-LABEL: func.func @f_grad
// CHECK-NOT:     tape.
// CHECK:         %[[ST:.*]] = region.alloc count = 1 : !region.tape<!region.record<f64>>
// CHECK-NEXT:    region.write %[[ST]][%{{.*}}], %sq : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %[[T:.*]] = region.alloc(%{{.*}}) : !region.tape<!region.record<f64, index, f32, i1>>
// CHECK-NEXT:    scf.for %i = %c0 to %c10 step %c1 {
// CHECK:           %j = arith.addi %i, %c1 : index
// CHECK-NEXT:      region.write %[[T]][%i], %y, %j, %yf, %b : !region.tape<!region.record<f64, index, f32, i1>>
// CHECK-NEXT:      memref.store %y, %x[%i] : memref<10xf64>
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK:         %r = scf.for %k = %c0 to %c10 step %c1 iter_args(%acc = %acc0) -> (f64) {
// CHECK-NEXT:      %[[IDX:.*]] = arith.subi %{{.*}}, %k : index
// CHECK-NEXT:      %[[Y:.*]], %[[J:.*]], %[[YF:.*]], %[[B:.*]] = region.read %[[T]][%[[IDX]]] : !region.tape<!region.record<f64, index, f32, i1>>
// CHECK-NEXT:      %yd = arith.extf %[[YF]] : f32 to f64
// CHECK-NEXT:      %z = arith.addf %[[Y]], %yd : f64
// CHECK-NEXT:      %zz = arith.select %[[B]], %z, %[[Y]] : f64
// CHECK-NEXT:      %ji = arith.index_cast %[[J]] : index to i64
// CHECK:         } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    %sq2 = region.read %[[ST]][%{{.*}}] : !region.tape<!region.record<f64>>
// CHECK-NEXT:    %res = arith.mulf %r, %sq2 : f64
// CHECK-NEXT:    region.dealloc %[[T]]
// CHECK-NEXT:    region.dealloc %[[ST]]
// CHECK-NEXT:    func.return %res : f64
