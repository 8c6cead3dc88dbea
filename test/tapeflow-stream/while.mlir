// RUN: tapeflow-opt %S/../tapeflow-regions/while.mlir --split-input-file -p 'tapeflow-regions,tapeflow-layers{spm-bytes=144},tapeflow-stream' | filecheck %s

// Tiles of a while region (the input: test/tapeflow-regions/while.mlir; tiles of 3
// records, two buffers). The record count is known only as the while runs, so the forward
// sweep cuts its tiles as it goes: at record r (tile t = r / 3, place w = r - 3t), when
// w = 0 the FIFO grows to hold tile t (stream.fifo_reserve, doubling) and t's buffer is
// acquired; when w = 2 the tile is committed. After the forward nest the count is known
// (off[4]): a partial last tile is committed with its records, each buffer is drained
// (acquire_write waits for its last commit) and released, and the last two tiles are
// prefetched. The reverse sweep is a ragged region's: pieces acquire their tile at its
// last record and release (and refill) it at its first.

// CHECK-LABEL: func.func @nest(
// CHECK:         %[[OFF:.*]] = memref.alloc() : memref<5xindex>
// CHECK:         %[[F:.*]] = stream.fifo_alloc tiles = 2 : !stream.fifo<!region.record<f64, i1>, 3>
// CHECK-NEXT:    %[[B0:.*]] = region.alloc count = 3 : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:    %[[B1:.*]] = region.alloc count = 3 : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK:         ^bb0(%w_1: f64, %it_1: index):
// CHECK-NEXT:      %[[IDX:.*]] = arith.addi %{{.*}}, %it_1 : index
// CHECK:           %[[T:.*]] = arith.divsi %[[IDX]], %[[K:.*]] : index
// CHECK-NEXT:      %[[TK:.*]] = arith.muli %[[T]], %[[K]] : index
// CHECK-NEXT:      %[[W:.*]] = arith.subi %[[IDX]], %[[TK]] : index
// CHECK:           %[[BUF:.*]] = arith.select %{{.*}}, %[[B1]], %[[B0]]
// CHECK-NEXT:      %[[OPEN:.*]] = arith.cmpi eq, %[[W]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[OPEN]] {
// CHECK:             stream.fifo_reserve %[[F]], %{{.*}} : !stream.fifo<!region.record<f64, i1>, 3>
// CHECK-NEXT:        stream.acquire_write %[[BUF]]
// CHECK-NEXT:      }
// CHECK-NEXT:      region.write %[[BUF]][%[[W]]], %w_1, %b : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:      %[[CLOSE:.*]] = arith.cmpi eq, %[[W]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[CLOSE]] {
// CHECK-NEXT:        %{{.*}} = stream.commit %[[BUF]] -> %[[F]][%[[T]]] : !stream.fifo<!region.record<f64, i1>, 3>
// CHECK-NEXT:      }
// CHECK:         } {tapeflow.layer = 2 : i64}
// CHECK:         %[[TOTAL:.*]] = memref.load %[[OFF]][%{{.*}}] : memref<5xindex>
// CHECK-NEXT:    %[[LAST:.*]] = arith.divsi %[[TOTAL]], %[[K]] : index
// CHECK:         %[[REST:.*]] = arith.subi %[[TOTAL]], %{{.*}} : index
// CHECK:         %{{.*}} = stream.commit %{{.*}} -> %[[F]][%[[LAST]]], %[[REST]] : !stream.fifo<!region.record<f64, i1>, 3>
// CHECK:         stream.acquire_write %[[B0]]
// CHECK-NEXT:    stream.release %[[B0]]
// CHECK-NEXT:    stream.acquire_write %[[B1]]
// CHECK-NEXT:    stream.release %[[B1]]
// CHECK:         stream.prefetch %[[F]][%{{.*}}] -> %{{.*}}, %{{.*}} : !stream.fifo<!region.record<f64, i1>, 3>
// CHECK:         stream.prefetch %[[F]][%{{.*}}] -> %{{.*}}, %{{.*}} : !stream.fifo<!region.record<f64, i1>, 3>
// CHECK:         stream.acquire_read %{{.*}} : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK:         region.read %{{.*}} : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK:         stream.release %{{.*}} : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK:         stream.fifo_dealloc %[[F]]
// CHECK-NOT:     region.reserve

// No loop around the while: the record count is the while's own.
// CHECK-LABEL: func.func @top(
// CHECK:         %[[F:.*]] = stream.fifo_alloc tiles = 2 : !stream.fifo<!region.record<f64>, 9>
// CHECK:         %y, %n = scf.while
// CHECK:           stream.fifo_reserve %[[F]]
// CHECK:         %[[LAST:.*]] = arith.divsi %n, %{{.*}} : index
// CHECK:         stream.commit %{{.*}} -> %[[F]][%[[LAST]]], %{{.*}}
