// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s

// An active scratch buffer gets a shadow of the same type, zero-filled right after the
// allocation; both deallocations move after the reverse sweep. The integer index buffer
// %idx is constant (no shadow), and so is a float buffer %junk that never reaches the
// result (no shadow: activity analysis).
func.func @gather(%p: memref<4xf64>, %idx: memref<2xi32>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %tmp = memref.alloc() : memref<2xf64>
  %junk = memref.alloc() : memref<2xf64>
  scf.for %i = %c0 to %c2 step %c1 {
    %k32 = memref.load %idx[%i] : memref<2xi32>
    %k = arith.index_cast %k32 : i32 to index
    %v = memref.load %p[%k] : memref<4xf64>
    %e = math.exp %v : f64
    memref.store %e, %tmp[%i] : memref<2xf64>
    memref.store %e, %junk[%i] : memref<2xf64>
  }
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (f64) {
    %t = memref.load %tmp[%i] : memref<2xf64>
    %a = arith.addf %acc, %t : f64
    scf.yield %a : f64
  }
  memref.dealloc %junk : memref<2xf64>
  memref.dealloc %tmp : memref<2xf64>
  func.return %r : f64
}

// CHECK-LABEL: func.func @gather_grad(%p: memref<4xf64>, %d_p: memref<4xf64>, %idx: memref<2xi32>, %seed: f64) {
// CHECK:         %tmp = memref.alloc() : memref<2xf64>
// CHECK-NEXT:    %[[DTMP:d_tmp]] = memref.alloc() : memref<2xf64>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.store %[[ZERO]], %[[DTMP]][%[[J]]] : memref<2xf64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %junk = memref.alloc() : memref<2xf64>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     tape.init
// CHECK:         memref.store %{{.*}}, %[[DTMP]][%{{.*}}] : memref<2xf64>
// CHECK:         %[[K:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:         memref.load %d_p[%[[K]]] : memref<4xf64>
// CHECK:         memref.dealloc %junk : memref<2xf64>
// CHECK-NEXT:    memref.dealloc %tmp : memref<2xf64>
// CHECK-NEXT:    memref.dealloc %[[DTMP]] : memref<2xf64>
// CHECK-NEXT:    func.return
