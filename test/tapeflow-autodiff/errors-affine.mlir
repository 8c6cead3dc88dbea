// RUN: not tapeflow-opt %s -p tapeflow-autodiff 2>&1 | filecheck %s

// affine.min (like affine.if and min/max bounds) is not lowered by the pass: a diagnostic
// naming the op, not a crash.
func.func @f(%x: memref<4xf64>, %n: index) attributes {tapeflow.autodiff} {
  affine.for %i = 0 to 4 {
    %m = "affine.min"(%i, %n) <{map = affine_map<(d0, d1) -> (d0, d1)>}> : (index, index) -> index
    %v = memref.load %x[%m] : memref<4xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %x[%m] : memref<4xf64>
  }
  func.return
}
// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors-affine.mlir:7:5: 'affine.min' unsupported affine construct
// CHECK-NOT: Traceback
