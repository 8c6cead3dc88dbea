// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=48},tapeflow-stream' | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=48},tapeflow-stream' | tapeflow-opt | filecheck %s

// 10 records of 8 bytes, layers of 3 records (4 tiles, the last one partial: its commit
// and prefetch move its 1 record, min(3, 10 - start), not 3), depth 2.
// Forward: tile g goes to SPM buffer g mod 2, acquired (waiting for that buffer's previous
// commit) right before the layer, committed asynchronously right after it; the commits of
// the last 2 tiles are waited for at once. Reverse: the last 2 tiles are prefetched before
// the reverse sweep; each layer waits for its tile right before its first read, releases
// it, and prefetches the tile 2 layers ahead into the same buffer.

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
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[L:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 10 : index
// CHECK-NOT:     region.alloc({{.*}}) : !region.tape<!region.record<f64>>
// CHECK:         %[[F:.*]] = stream.fifo_alloc tiles = 4 : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:    %[[B0:.*]] = region.alloc count = 3 : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:    %[[B1:.*]] = region.alloc count = 3 : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:    scf.for %[[START:.*]] = %[[C0]] to %[[N]] step %[[L]] {
// CHECK:           %[[END:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      %[[J:.*]] = arith.divsi %[[START]], %[[L]] : index
// CHECK-NEXT:      %[[SLOT:.*]] = arith.remsi %[[J]], %[[C2]] : index
// CHECK-NEXT:      %[[IS1:.*]] = arith.cmpi eq, %[[SLOT]], %[[C1]] : index
// CHECK-NEXT:      %[[BUF:.*]] = arith.select %[[IS1]], %[[B1]], %[[B0]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      stream.acquire_write %[[BUF]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      scf.for %i = %[[START]] to %[[END]] step %c1 {
// CHECK-NEXT:        %[[W:.*]] = arith.subi %i, %[[START]] : index
// CHECK-NEXT:        %v = memref.load %x[%i] : memref<10xf64>
// CHECK-NEXT:        %w = math.tanh %v : f64
// CHECK-NEXT:        region.write %[[BUF]][%[[W]]], %w : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:      %[[LEFT:.*]] = arith.subi %[[N]], %[[START]] : index
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[L]], %[[LEFT]] : index
// CHECK-NEXT:      %[[CNT:.*]] = arith.select %[[LT]], %[[L]], %[[LEFT]] : index
// CHECK-NEXT:      %[[TOK:.*]] = stream.commit %[[BUF]] -> %[[F]][%[[J]]], %[[CNT]] : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:      %[[TAIL:.*]] = arith.cmpi sge, %[[J]], %[[C2]] : index
// CHECK-NEXT:      scf.if %[[TAIL]] {
// CHECK-NEXT:        stream.wait %[[TOK]]
// CHECK-NEXT:      }
// CHECK-NEXT:    } {tapeflow.layer = 3 : i64}
// CHECK-NEXT:    %{{.*}} = stream.prefetch %[[F]][%[[L]]] -> %[[B1]], %[[C1]] : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:    %{{.*}} = stream.prefetch %[[F]][%[[C2]]] -> %[[B0]], %[[L]] : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:    %r = scf.for %[[SR:.*]] = %[[C0]] to %[[N]] step %[[L]] iter_args(%{{.*}} = %z) -> (f64) {
// CHECK:           %[[KLB:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK-NEXT:      %[[KUB:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK-NEXT:      %[[JR:.*]] = arith.divsi %[[SR]], %[[L]] : index
// CHECK-NEXT:      %[[G:.*]] = arith.subi %[[L]], %[[JR]] : index
// CHECK-NEXT:      %[[RSLOT:.*]] = arith.remsi %[[G]], %[[C2]] : index
// CHECK-NEXT:      %[[RIS1:.*]] = arith.cmpi eq, %[[RSLOT]], %[[C1]] : index
// CHECK-NEXT:      %[[RBUF:.*]] = arith.select %[[RIS1]], %[[B1]], %[[B0]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      stream.acquire_read %[[RBUF]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      %[[KLAST:.*]] = arith.subi %[[KUB]], %[[C1]] : index
// CHECK-NEXT:      %[[RES:.*]] = scf.for %k = %[[KLB]] to %[[KUB]] step %c1 iter_args(%a = %{{.*}}) -> (f64) {
// CHECK-NEXT:        %[[R:.*]] = arith.subi %[[KLAST]], %k : index
// CHECK-NEXT:        %w_1 = region.read %[[RBUF]][%[[R]]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:        %a2 = arith.addf %a, %w_1 : f64
// CHECK-NEXT:        scf.yield %a2 : f64
// CHECK-NEXT:      } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:      stream.release %[[RBUF]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:      %[[NEXT:.*]] = arith.subi %[[G]], %[[C2]] : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi sge, %[[G]], %[[C2]] : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK:             %{{.*}} = stream.prefetch %[[F]][%[[NEXT]]] -> %[[RBUF]], %{{.*}} : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[RES]] : f64
// CHECK-NEXT:    } {tapeflow.layer = 3 : i64}
// CHECK-NEXT:    stream.fifo_dealloc %[[F]] : !stream.fifo<!region.record<f64>, 3>
// CHECK-NEXT:    region.dealloc %[[B0]]
// CHECK-NEXT:    region.dealloc %[[B1]]
// CHECK-NEXT:    func.return %r : f64
