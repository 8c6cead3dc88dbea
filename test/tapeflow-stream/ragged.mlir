// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream' | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64},tapeflow-stream' | tapeflow-opt | filecheck %s

// Streaming a ragged region: rows of 1, 2, 3 and 4 records (10), tiles of 4 records
// (0-3, 4-7, 8-9: 3 tiles, the last one partial), depth 2. Each piece of records s .. e-1
// lies in tile t = s / 4, buffer t mod 2. Forward: the piece acquires the buffer when it
// starts the tile (s = 4t), writes record r at r - 4t (the shift folded into the
// loop-invariant part of the index), and commits the tile when it ends it
// (e = min(4t + 4, 10)), moving its e - 4t records; the last 2 commits are waited for.
// Reverse: the last 2 tiles are prefetched after the forward nest (tile 2: 2 records);
// a piece acquires its tile when it holds the tile's last record, and releases it (and
// prefetches tile t - 2 into it) when it holds its first: a tile boundary inside a row
// releases one tile and acquires the next within the same outer iteration.

func.func @triangular(%x: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %t = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %n = arith.addi %i, %c1 : index
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%j] : memref<4xf64>
      %w = math.tanh %v : f64
      tape.push %t, %w : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %z) -> (f64) {
    %i = arith.subi %c3, %k : index
    %n = arith.addi %i, %c1 : index
    %s = scf.for %kk = %c0 to %n step %c1 iter_args(%b = %a) -> (f64) {
      %w = tape.pop %t : !tape.cache<f64>
      %b2 = arith.addf %b, %w : f64
      scf.yield %b2 : f64
    } {tapeflow.loop = 1 : i64}
    scf.yield %s : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %t : !tape.cache<f64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @triangular
// CHECK-DAG:     %[[TOTAL:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[K:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[F:.*]] = stream.fifo_alloc tiles = 3 : !stream.fifo<!region.record<f64>, 4>
// CHECK-NEXT:    %[[B0:.*]] = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:    %[[B1:.*]] = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:    scf.for %i = %c0 to %c4 step %c1 {
// CHECK:           %[[OFFI:.*]] = memref.load %{{.*}}[%i] : memref<4xindex>
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK:             %[[S:.*]] = arith.addi %[[OFFI]], %{{.*}} : index
// CHECK:             %[[E:.*]] = arith.addi %[[S]], %{{.*}} : index
// CHECK-NEXT:        %[[T:.*]] = arith.shrsi %[[S]], %[[TWO]] : index
// CHECK-NEXT:        %[[TK:.*]] = arith.muli %[[T]], %[[K]] : index
// CHECK-NEXT:        %[[SLOT:.*]] = arith.remsi %[[T]], %[[TWO]] : index
// CHECK-NEXT:        %[[IS1:.*]] = arith.cmpi eq, %[[SLOT]], %[[ONE]] : index
// CHECK-NEXT:        %[[BUF:.*]] = arith.select %[[IS1]], %[[B1]], %[[B0]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:        %[[TK4:.*]] = arith.addi %[[TK]], %[[K]] : index
// CHECK-NEXT:        %[[LT:.*]] = arith.cmpi slt, %[[TK4]], %[[TOTAL]] : index
// CHECK-NEXT:        %[[TEND:.*]] = arith.select %[[LT]], %[[TK4]], %[[TOTAL]] : index
// CHECK-NEXT:        %[[FIRST:.*]] = arith.cmpi sge, %[[TK]], %[[S]] : index
// CHECK-NEXT:        scf.if %[[FIRST]] {
// CHECK-NEXT:          stream.acquire_write %[[BUF]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[SHIFT:.*]] = arith.subi %[[OFFI]], %[[TK]] : index
// CHECK-NEXT:        scf.for %j = %{{.*}} to %{{.*}} step %c1 {
// CHECK:               %[[W:.*]] = arith.addi %[[SHIFT]], %j : index
// CHECK-NEXT:          region.write %[[BUF]][%[[W]]], %w : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:        } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:        %[[LASTP:.*]] = arith.cmpi sge, %[[E]], %[[TEND]] : index
// CHECK-NEXT:        scf.if %[[LASTP]] {
// CHECK-NEXT:          %[[CNT:.*]] = arith.subi %[[E]], %[[TK]] : index
// CHECK-NEXT:          %[[TOK:.*]] = stream.commit %[[BUF]] -> %[[F]][%[[T]]], %[[CNT]] : !stream.fifo<!region.record<f64>, 4>
// CHECK-NEXT:          %[[TAIL:.*]] = arith.cmpi sge, %[[T]], %[[ONE]] : index
// CHECK-NEXT:          scf.if %[[TAIL]] {
// CHECK-NEXT:            stream.wait %[[TOK]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      } {tapeflow.layer = 4 : i64, tapeflow.ragged}
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    %{{.*}} = stream.prefetch %[[F]][%[[TWO]]] -> %[[B0]], %[[TWO]] : !stream.fifo<!region.record<f64>, 4>
// CHECK-NEXT:    %{{.*}} = stream.prefetch %[[F]][%[[ONE]]] -> %[[B1]], %[[K]] : !stream.fifo<!region.record<f64>, 4>
// CHECK-NEXT:    %r = scf.for %k = %c0 to %c4 step %c1
// CHECK:           %[[ROFF:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<4xindex>
// CHECK:           %[[LAST:.*]] = arith.addi %[[ROFF]], %{{.*}} : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[ONE]] iter_args
// CHECK:             %[[RT:.*]] = arith.shrsi %[[RS:.*]], %[[TWO]] : index
// CHECK-NEXT:        %[[RTK:.*]] = arith.muli %[[RT]], %[[K]] : index
// CHECK:             %[[RBUF:.*]] = arith.select %{{.*}}, %[[B1]], %[[B0]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK:             %[[RTEND:.*]] = arith.select %{{.*}}, %{{.*}}, %[[TOTAL]] : index
// CHECK-NEXT:        %[[HASLAST:.*]] = arith.cmpi sge, %{{.*}}, %[[RTEND]] : index
// CHECK-NEXT:        scf.if %[[HASLAST]] {
// CHECK-NEXT:          stream.acquire_read %[[RBUF]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[RSHIFT:.*]] = arith.subi %[[LAST]], %[[RTK]] : index
// CHECK-NEXT:        %{{.*}} = scf.for %kk = %{{.*}} to %{{.*}} step %c1
// CHECK-NEXT:          %[[R:.*]] = arith.subi %[[RSHIFT]], %kk : index
// CHECK-NEXT:          %w_1 = region.read %[[RBUF]][%[[R]]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK:             } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:        %[[HASFIRST:.*]] = arith.cmpi sge, %[[RTK]], %[[RS]] : index
// CHECK-NEXT:        scf.if %[[HASFIRST]] {
// CHECK-NEXT:          stream.release %[[RBUF]] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK-NEXT:          %[[NXT:.*]] = arith.subi %[[RT]], %[[TWO]] : index
// CHECK-NEXT:          %[[MORE:.*]] = arith.cmpi sge, %[[RT]], %[[TWO]] : index
// CHECK-NEXT:          scf.if %[[MORE]] {
// CHECK-NEXT:            %{{.*}} = stream.prefetch %[[F]][%[[NXT]]] -> %[[RBUF]] : !stream.fifo<!region.record<f64>, 4>
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK:         stream.fifo_dealloc %[[F]]
// CHECK-NEXT:    region.dealloc %[[B0]]
// CHECK-NEXT:    region.dealloc %[[B1]]
// CHECK-NEXT:    memref.dealloc
