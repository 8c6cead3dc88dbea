// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=128}' | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=112}' | filecheck %s --check-prefix=ONE
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=128 tile-bytes=56}' | filecheck %s --check-prefix=ONE

// Issue #10 item 6: a layer may span an outer loop. The records of one outer iteration
// (4 inner iterations, 4 x 8 bytes) fit the tile, so the pass strip-mines the OUTER loop
// and each tile holds whole runs of the inner loop. 128 bytes at depth 2 give tiles of
// 8 records: 2 outer iterations per layer, 3 layers (balanced), the inner loop untouched
// inside; the reverse sweep walks the same layers backwards. `tapeflow.layer_span = 1`
// says that a tile spans one loop inside the strip-mined one.
// With room for 7 records (112 bytes, or tile-bytes=56), a tile cannot hold two runs of
// the inner loop: spanning would give the same 4-record tiles, so the inner loop is
// strip-mined as before (ONE).

func.func @nest_grad(%x: memref<6x4xf64>, %dx: memref<6x4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c6 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j] : memref<6x4xf64>
      %w = math.tanh %v : f64
      tape.push %t, %w : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c6 step %c1 iter_args(%a = %z) -> (f64) {
    %r2 = scf.for %kj = %c0 to %c4 step %c1 iter_args(%b = %a) -> (f64) {
      %w = tape.pop %t : !tape.cache<f64>
      %b2 = arith.addf %b, %w : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %r2 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @nest_grad
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[L:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         %[[T:.*]] = region.alloc(%{{.*}}) {tapeflow.layer_records = 8 : i64, tapeflow.spm_bytes = 128 : i64, tapeflow.layer_span = 1 : i64} : !region.tape<!region.record<f64>>
// CHECK-NEXT:    scf.for %[[START:.*]] = %[[C0]] to %[[N]] step %[[L]] {
// CHECK:           scf.for %i = %[[START]] to %{{.*}} step %c1 {
// CHECK-NEXT:        %[[ROW:.*]] = arith.muli %i, %[[C4]] : index
// CHECK-NEXT:        scf.for %j = %c0 to %c4 step %c1 {
// CHECK-NEXT:          %[[IDX:.*]] = arith.addi %[[ROW]], %j : index
// CHECK:               region.write %[[T]][%[[IDX]]], %w
// CHECK-NEXT:        } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:      } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    } {tapeflow.layer = 2 : i64}
// CHECK-NEXT:    %r = scf.for %{{.*}} = %[[C0]] to %[[N]] step %[[L]] iter_args
// CHECK:           scf.for %k = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK:             %r2 = scf.for %kj = %c0 to %c4 step %c1 iter_args
// CHECK:               region.read %[[T]]
// CHECK:             } {tapeflow.loop = 1 : i64}
// CHECK:           } {tapeflow.loop = 0 : i64}
// CHECK:         } {tapeflow.layer = 2 : i64}

// ONE-LABEL: func.func @nest_grad
// ONE:         region.alloc(%{{.*}}) {tapeflow.layer_records = 4 : i64, tapeflow.spm_bytes = {{[0-9]+}} : i64} : !region.tape<!region.record<f64>>
// ONE-NEXT:    scf.for %i = %c0 to %c6 step %c1 {
// ONE:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// ONE:             scf.for %j = %{{.*}} to %{{.*}} step %c1 {
// ONE:             } {tapeflow.loop = 1 : i64}
// ONE-NEXT:      } {tapeflow.layer = 4 : i64}
// ONE-NEXT:    } {tapeflow.loop = 0 : i64}
