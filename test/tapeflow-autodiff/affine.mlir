// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s

// affine.for/load/store/apply are lowered to scf.for and memref with index arithmetic
// inside the gradient (the primal keeps its affine form). A symbol-bounded loop and a map
// with a constant offset.
#map = affine_map<(d0)[s0] -> (d0 + s0)>
func.func @shift(%x: memref<8xf64>, %y: memref<8xf64>, %n: index) attributes {tapeflow.autodiff} {
  %c1 = arith.constant 1 : index
  affine.for %i = 0 to %n {
    %v = affine.load %x[%i + 1] : memref<8xf64>
    %j = affine.apply #map(%i)[%c1]
    %e = math.exp %v : f64
    affine.store %e, %y[%j] : memref<8xf64>
  }
  func.return
}

// CHECK-LABEL: func.func @shift(
// CHECK:         affine.for
// CHECK-LABEL: func.func @shift_grad(%x: memref<8xf64>, %d_x: memref<8xf64>, %y: memref<8xf64>, %d_y: memref<8xf64>, %n: index) {
// CHECK-NOT:     affine.
// CHECK:         scf.for %i = %{{.*}} to %n step %{{.*}} {
// CHECK:           %[[I1:.*]] = arith.addi %i, %{{.*}} : index
// CHECK-NEXT:      %v = memref.load %x[%[[I1]]] : memref<8xf64>
// CHECK-NEXT:      %[[J:.*]] = arith.addi %i, %c1 : index
// CHECK-NEXT:      %e = math.exp %v : f64
// CHECK-NEXT:      memref.store %e, %y[%[[J]]] : memref<8xf64>
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK:         scf.for
// The store: de = dy[j]; dy[j] = 0. Then exp: dv = de * e, with e recomputed.
// CHECK:           %[[DE:.*]] = memref.load %d_y[%{{.*}}] : memref<8xf64>
// CHECK:           memref.store %{{.*}}, %d_y[%{{.*}}] : memref<8xf64>
// CHECK-NEXT:      %[[DV:.*]] = arith.mulf %[[DE]], %{{.*}} : f64
// CHECK:           memref.store %{{.*}}, %d_x[%{{.*}}] : memref<8xf64>
// CHECK:         } {tapeflow.loop = 0 : i64}
