// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64}' | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-regions,tapeflow-layers{spm-bytes=64}' | tapeflow-opt | filecheck %s

// A ragged region's layers are ranges of records, not of outer iterations. Rows of 1, 2,
// 3 and 4 records (10 in all), 2 x 4 records of 8 bytes in 64 bytes: tiles of 4 records,
// records 0-3, 4-7 and 8-9, so the tile boundaries 4 and 8 fall inside rows 2 and 3.
// Each run of the inner loop (records b .. b+n-1, b = off[i]) becomes a loop over the
// tiles it touches, b / 4 to ceil((b + n) / 4) (none when n = 0), and a piece per tile
// running the iterations of records max(b, 4t) .. min(b + n, 4t + 4) - 1. The reverse
// run walks its tiles backwards. Bodies and record indices are unchanged.

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
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[L:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         %[[OFF:.*]] = memref.alloc() : memref<4xindex>
// CHECK:         %[[T:.*]] = region.alloc count = 10 {tapeflow.ragged, tapeflow.layer_records = 4 : i64, tapeflow.spm_bytes = 64 : i64} : !region.tape<!region.record<f64>>
// CHECK-NEXT:    scf.for %i = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[N:.*]] = arith.addi %i, %c1 : index
// CHECK-NEXT:      %[[B:.*]] = memref.load %[[OFF]][%i] : memref<4xindex>
// CHECK-NEXT:      %[[POS:.*]] = arith.cmpi sgt, %[[N]], %[[ZERO]] : index
// CHECK-NEXT:      %[[ROWN:.*]] = arith.select %[[POS]], %[[N]], %[[ZERO]] : index
// CHECK-NEXT:      %[[TF:.*]] = arith.shrsi %[[B]], %[[TWO]] : index
// CHECK-NEXT:      %[[BN:.*]] = arith.addi %[[B]], %[[ROWN]] : index
// CHECK-NEXT:      %[[UP:.*]] = arith.addi %[[BN]], %[[L]] : index
// CHECK-NEXT:      %[[UP1:.*]] = arith.subi %[[UP]], %[[ONE]] : index
// CHECK-NEXT:      %[[PAST:.*]] = arith.shrsi %[[UP1]], %[[TWO]] : index
// CHECK-NEXT:      %[[EMPTY:.*]] = arith.cmpi sle, %[[ROWN]], %[[ZERO]] : index
// CHECK-NEXT:      %[[TL:.*]] = arith.select %[[EMPTY]], %[[TF]], %[[PAST]] : index
// CHECK-NEXT:      scf.for %[[TILE:.*]] = %[[TF]] to %[[TL]] step %[[ONE]] {
// CHECK-NEXT:        %[[TK:.*]] = arith.muli %[[TILE]], %[[L]] : index
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpi sgt, %[[B]], %[[TK]] : index
// CHECK-NEXT:        %[[S:.*]] = arith.select %[[GT]], %[[B]], %[[TK]] : index
// CHECK-NEXT:        %[[TK4:.*]] = arith.addi %[[TK]], %[[L]] : index
// CHECK-NEXT:        %[[LT:.*]] = arith.cmpi slt, %[[BN]], %[[TK4]] : index
// CHECK-NEXT:        %[[E:.*]] = arith.select %[[LT]], %[[BN]], %[[TK4]] : index
// CHECK-NEXT:        %[[JLB:.*]] = arith.subi %[[S]], %[[B]] : index
// CHECK-NEXT:        %[[JUB:.*]] = arith.subi %[[E]], %[[B]] : index
// CHECK-NEXT:        scf.for %j = %[[JLB]] to %[[JUB]] step %c1 {
// CHECK-NEXT:          %[[W:.*]] = arith.addi %[[B]], %j : index
// CHECK-NEXT:          %v = memref.load %x[%j] : memref<4xf64>
// CHECK-NEXT:          %w = math.tanh %v : f64
// CHECK-NEXT:          region.write %[[T]][%[[W]]], %w : !region.tape<!region.record<f64>>
// CHECK-NEXT:        } {tapeflow.loop = 1 : i64}
// CHECK-NEXT:      } {tapeflow.layer = 4 : i64, tapeflow.ragged}
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// The reverse: the run's last record is off[3 - k] + n - 1, its first b = last - n + 1;
// piece u of tiles tf .. tl-1 is tile tf + tl - 1 - u, reverse iterations b+n-e .. b+n-s-1.
// CHECK:         scf.for %k = %c0 to %c4 step %c1
// CHECK:           %[[OFFK:.*]] = memref.load %[[OFF]][%{{.*}}] : memref<4xindex>
// CHECK:           %[[LAST:.*]] = arith.addi %[[OFFK]], %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = arith.cmpi sgt, %n{{.*}}, %[[ZERO]] : index
// CHECK-NEXT:      %[[RN:.*]] = arith.select %{{.*}}, %n{{.*}}, %[[ZERO]] : index
// CHECK-NEXT:      %[[B0:.*]] = arith.subi %[[LAST]], %[[RN]] : index
// CHECK-NEXT:      %[[RB:.*]] = arith.addi %[[B0]], %[[ONE]] : index
// CHECK-NEXT:      %[[RTF:.*]] = arith.shrsi %[[RB]], %[[TWO]] : index
// CHECK-NEXT:      %[[RBN:.*]] = arith.addi %[[RB]], %[[RN]] : index
// CHECK:           %[[RTL:.*]] = arith.select %{{.*}}, %[[RTF]], %{{.*}} : index
// CHECK-NEXT:      %[[SUM:.*]] = arith.addi %[[RTF]], %[[RTL]] : index
// CHECK-NEXT:      %[[TOP:.*]] = arith.subi %[[SUM]], %[[ONE]] : index
// CHECK-NEXT:      %{{.*}} = scf.for %[[U:.*]] = %[[RTF]] to %[[RTL]] step %[[ONE]] iter_args(%{{.*}} = %a) -> (f64) {
// CHECK-NEXT:        %[[RT:.*]] = arith.subi %[[TOP]], %[[U]] : index
// CHECK-NEXT:        %[[RTK:.*]] = arith.muli %[[RT]], %[[L]] : index
// CHECK:             %[[KLB:.*]] = arith.subi %[[RBN]], %{{.*}} : index
// CHECK-NEXT:        %[[KUB:.*]] = arith.subi %[[RBN]], %{{.*}} : index
// CHECK-NEXT:        %{{.*}} = scf.for %kk = %[[KLB]] to %[[KUB]] step %c1
// CHECK-NEXT:          %[[R:.*]] = arith.subi %[[LAST]], %kk : index
// CHECK-NEXT:          %w_1 = region.read %[[T]][%[[R]]] : !region.tape<!region.record<f64>>
// CHECK:           } {tapeflow.layer = 4 : i64, tapeflow.ragged}
// CHECK:         region.dealloc %[[T]]
// CHECK-NEXT:    memref.dealloc %[[OFF]]
