// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=48}' | filecheck %s
// RUN: tapeflow-opt %s --tapeflow-regions --tapeflow-layers=spm-bytes=48 | filecheck %s

// 10 iterations, 8-byte records, 48 bytes of scratchpad, depth 2 (default): layers of
// 48 / (2 x 8) = 3 records, so 4 layers, the last one holding 1 iteration. The reverse
// sweep walks the layers from the last (partial) one to the first.

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
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[L:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 9 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 10 : index
// CHECK:         %[[T:.*]] = region.alloc(%[[N]]) {tapeflow.layer_records = 3 : i64, tapeflow.spm_bytes = 48 : i64} : !region.tape<!region.record<f64>>
// CHECK-NEXT:    scf.for %[[START:.*]] = %[[C0]] to %[[N]] step %[[L]] {
// CHECK-NEXT:      %[[SL:.*]] = arith.addi %[[START]], %[[L]] : index
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[SL]], %[[N]] : index
// CHECK-NEXT:      %[[END:.*]] = arith.select %[[LT]], %[[SL]], %[[N]] : index
// CHECK-NEXT:      scf.for %i = %[[START]] to %[[END]] step %c1 {
// CHECK-NEXT:        %v = memref.load %x[%i] : memref<10xf64>
// CHECK-NEXT:        %w = math.tanh %v : f64
// CHECK-NEXT:        region.write %[[T]][%i], %w : !region.tape<!region.record<f64>>
// CHECK-NEXT:      } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    } {tapeflow.layer = 3 : i64}
// CHECK-NEXT:    %r = scf.for %[[SR:.*]] = %[[C0]] to %[[N]] step %[[L]] iter_args(%[[ACC:.*]] = %z) -> (f64) {
// CHECK-NEXT:      %[[RSTART:.*]] = arith.subi %[[LAST]], %[[SR]] : index
// CHECK-NEXT:      %[[RSL:.*]] = arith.addi %[[RSTART]], %[[L]] : index
// CHECK-NEXT:      %[[RLT:.*]] = arith.cmpi slt, %[[RSL]], %[[N]] : index
// CHECK-NEXT:      %[[REND:.*]] = arith.select %[[RLT]], %[[RSL]], %[[N]] : index
// CHECK-NEXT:      %[[KLB:.*]] = arith.subi %[[N]], %[[REND]] : index
// CHECK-NEXT:      %[[KUB:.*]] = arith.subi %[[N]], %[[RSTART]] : index
// CHECK-NEXT:      %[[RES:.*]] = scf.for %k = %[[KLB]] to %[[KUB]] step %c1 iter_args(%a = %[[ACC]]) -> (f64) {
// CHECK-NEXT:        %[[IDX:.*]] = arith.subi %[[LAST]], %k : index
// CHECK-NEXT:        %w_1 = region.read %[[T]][%[[IDX]]] : !region.tape<!region.record<f64>>
// CHECK-NEXT:        %a2 = arith.addf %a, %w_1 : f64
// CHECK-NEXT:        scf.yield %a2 : f64
// CHECK-NEXT:      } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:      scf.yield %[[RES]] : f64
// CHECK-NEXT:    } {tapeflow.layer = 3 : i64}
// CHECK-NEXT:    region.dealloc %[[T]]
