// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=24 depth=1},tapeflow-stream{depth=1}' | filecheck %s

// Depth 1: one SPM buffer, no overlap. Each forward layer waits for the previous commit
// before writing; the reverse sweep prefetches the previous tile only after releasing the
// current one, and waits for it at the start of the next layer.

func.func @f_grad(%x: memref<10xf64>, %dx: memref<10xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c10 step %c1 {
    %v = memref.load %x[%i] : memref<10xf64>
    %w = math.tanh %v : f64
    tape.push %t, %w : !tape.cache<f64>
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c10 step %c1 iter_args(%a = %z) -> (f64) {
    %w = tape.pop %t : !tape.cache<f64>
    %a2 = arith.addf %a, %w : f64
    scf.yield %a2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @f_grad
// CHECK:         %[[F:.*]] = stream.fifo_alloc tiles = 4 : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:    %[[B:.*]] = region.alloc count = 3 : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NOT:     region.alloc
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       arith.remsi
// CHECK:           %[[J:.*]] = arith.divsi
// CHECK-NEXT:      stream.acquire_write %[[B]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      scf.for %i
// CHECK:             region.write %[[B]][%{{.*}}], %w
// CHECK:           %[[TOK:.*]] = stream.commit %[[B]] -> %[[F]][%[[J]]]
// CHECK-NEXT:      %[[TAIL:.*]] = arith.cmpi sge, %[[J]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[TAIL]] {
// CHECK-NEXT:        stream.wait %[[TOK]]
// CHECK:         } {tapeflow.layer = 3 : i64}
// CHECK-NEXT:    %{{.*}} = stream.prefetch %[[F]][%{{.*}}] -> %[[B]]
// CHECK-NEXT:    %r = scf.for
// CHECK:           stream.acquire_read %[[B]]
// CHECK-NEXT:      arith.subi
// CHECK-NEXT:      scf.for
// CHECK:             region.read %[[B]]
// CHECK:           stream.release %[[B]]
// CHECK-NEXT:      %[[PREV:.*]] = arith.subi %[[G:.*]], %{{.*}} : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi sge, %[[G]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK:             stream.prefetch %[[F]][%[[PREV]]] -> %[[B]], %{{.*}} :
