// RUN: tapeflow-opt %S/../tapeflow-regions/while.mlir --split-input-file -p 'tapeflow-regions,tapeflow-layers{spm-bytes=144}' | filecheck %s

// Layers of a while region (the input: test/tapeflow-regions/while.mlir) are ranges of
// records, as a ragged region's: tiles of 3 records (144 bytes, depth 2, over records of
// 16 + 8 bytes). The forward while is left whole (its records are cut into tiles as it
// runs: tapeflow-stream); each reverse run of a while's iterations, records b .. b+n-1,
// becomes a loop over the tiles it touches (`tapeflow.layer = 3`, `tapeflow.ragged`)
// around one piece per tile, walked backwards.

// CHECK-LABEL: func.func @nest(
// CHECK:         %[[T:.*]] = region.alloc count = 4 {tapeflow.growable, tapeflow.layer_records = 3 : i64, tapeflow.spm_bytes = 96 : i64} : !region.tape<!region.record<f64, i1>>
// CHECK:         %y, %n = scf.while
// CHECK:           region.reserve %[[T]], %{{.*}} : !region.tape<!region.record<f64, i1>>
// CHECK-NEXT:      region.write %[[T]][%{{.*}}], %w_1, %b : !region.tape<!region.record<f64, i1>>
// CHECK:         } attributes {tapeflow.loop = 1 : i64}
// CHECK:         %n_1 = region.read
// CHECK:         scf.for %[[P:.*]] = %[[FIRST:.*]] to %[[PAST:.*]] step %{{.*}} iter_args
// CHECK:           scf.for %kk = %{{.*}} to %{{.*}} step %c1
// CHECK-NEXT:        %[[R:.*]] = arith.subi %{{.*}}, %kk : index
// CHECK-NEXT:        %{{.*}}, %{{.*}} = region.read %[[T]][%[[R]]] : !region.tape<!region.record<f64, i1>>
// CHECK:           } {tapeflow.loop = 1 : i64}
// CHECK:         } {tapeflow.layer = 3 : i64, tapeflow.ragged}

// With no loop around the while, tiles of 9 records (144 bytes over depth 2 x 8 bytes).
// CHECK-LABEL: func.func @top(
// CHECK:         %[[T:.*]] = region.alloc count = 16 {tapeflow.growable, tapeflow.layer_records = 9 : i64, tapeflow.spm_bytes = 144 : i64} : !region.tape<!region.record<f64>>
// CHECK:           region.write %[[T]][%it_1], %w_1
// CHECK:         scf.for %k = %{{.*}} to %{{.*}} step %c1
// CHECK-NEXT:      %[[R:.*]] = arith.subi %{{.*}}, %k : index
// CHECK-NEXT:      %{{.*}} = region.read %[[T]][%[[R]]] : !region.tape<!region.record<f64>>
// CHECK:         } {tapeflow.layer = 9 : i64, tapeflow.ragged}
