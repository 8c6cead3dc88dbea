// RUN: tapeflow-opt %s -p tapeflow-lower-to-std | filecheck %s --match-full-lines

// Record tapes become one buffer per field (struct of arrays), scratchpad tapes ordinary
// buffers; a FIFO of tiles one memref<?xKxT> per field; commit and prefetch copy loops;
// acquires, release, wait and tokens vanish; a select between buffers selects each field.

!R = !region.record<f64, i1>
!B = !region.tape<!R, #stream.spm>
!F = !stream.fifo<!R, 4>
func.func @s(%n: index, %t: index, %c: i1, %x: f64, %p: i1) -> f64 {
  %b0 = region.alloc count = 4 : !B
  %b1 = region.alloc(%n) : !B
  %f = stream.fifo_alloc tiles = 3 : !F
  %buf = arith.select %c, %b0, %b1 : !B
  stream.acquire_write %buf : !B
  region.write %buf[%t], %x, %p : !B
  %w = stream.commit %buf -> %f[%t] : !F
  stream.wait %w
  %r = stream.prefetch %f[%t] -> %b0 : !F
  stream.acquire_read %b0, %r : !B
  %y, %q = region.read %b0[%t] : !B
  stream.release %b0 : !B
  stream.fifo_dealloc %f : !F
  region.dealloc %b0 : !B
  region.dealloc %b1 : !B
  func.return %y : f64
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @s(%n: index, %t: index, %c: i1, %x: f64, %p: i1) -> f64 {
// CHECK-NEXT:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:     %[[B0X:.*]] = memref.alloc(%[[C4]]) : memref<?xf64>
// CHECK-NEXT:     %[[B0P:.*]] = memref.alloc(%[[C4]]) : memref<?xi1>
// CHECK-NEXT:     %[[B1X:.*]] = memref.alloc(%n) : memref<?xf64>
// CHECK-NEXT:     %[[B1P:.*]] = memref.alloc(%n) : memref<?xi1>
// CHECK-NEXT:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:     %[[FX:.*]] = memref.alloc(%[[C3]]) : memref<?x4xf64>
// CHECK-NEXT:     %[[FP:.*]] = memref.alloc(%[[C3]]) : memref<?x4xi1>
// CHECK-NEXT:     %[[BX:.*]] = arith.select %c, %[[B0X]], %[[B1X]] : memref<?xf64>
// CHECK-NEXT:     %[[BP:.*]] = arith.select %c, %[[B0P]], %[[B1P]] : memref<?xi1>
// CHECK-NEXT:     memref.store %x, %[[BX]][%t] : memref<?xf64>
// CHECK-NEXT:     memref.store %p, %[[BP]][%t] : memref<?xi1>
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %{{.*}} = arith.constant 4 : index
// CHECK-NEXT:     %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:     scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:       %[[V:.*]] = memref.load %[[BX]][%[[K]]] : memref<?xf64>
// CHECK-NEXT:       memref.store %[[V]], %[[FX]][%t, %[[K]]] : memref<?x4xf64>
// CHECK-NEXT:       %[[W:.*]] = memref.load %[[BP]][%[[K]]] : memref<?xi1>
// CHECK-NEXT:       memref.store %[[W]], %[[FP]][%t, %[[K]]] : memref<?x4xi1>
// CHECK-NEXT:     }
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %{{.*}} = arith.constant 4 : index
// CHECK-NEXT:     %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:     scf.for %[[K2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:       %[[V2:.*]] = memref.load %[[FX]][%t, %[[K2]]] : memref<?x4xf64>
// CHECK-NEXT:       memref.store %[[V2]], %[[B0X]][%[[K2]]] : memref<?xf64>
// CHECK-NEXT:       %[[W2:.*]] = memref.load %[[FP]][%t, %[[K2]]] : memref<?x4xi1>
// CHECK-NEXT:       memref.store %[[W2]], %[[B0P]][%[[K2]]] : memref<?xi1>
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[Y:.*]] = memref.load %[[B0X]][%t] : memref<?xf64>
// CHECK-NEXT:     %{{.*}} = memref.load %[[B0P]][%t] : memref<?xi1>
// CHECK-NEXT:     memref.dealloc %[[FX]] : memref<?x4xf64>
// CHECK-NEXT:     memref.dealloc %[[FP]] : memref<?x4xi1>
// CHECK-NEXT:     memref.dealloc %[[B0X]] : memref<?xf64>
// CHECK-NEXT:     memref.dealloc %[[B0P]] : memref<?xi1>
// CHECK-NEXT:     memref.dealloc %[[B1X]] : memref<?xf64>
// CHECK-NEXT:     memref.dealloc %[[B1P]] : memref<?xi1>
// CHECK-NEXT:     func.return %[[Y]] : f64
// CHECK-NEXT:   }
// CHECK-NEXT: }
