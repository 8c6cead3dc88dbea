// RUN: not tapeflow-opt %s -p tapeflow-autodiff 2>&1 | filecheck %s

// A view op (`memref.cast`, `subview`, `reinterpret_cast`, `expand/collapse_shape`) is
// another name for its source's memory: activity analysis makes the two depend on each
// other both ways. Here the copy into the cast fills %t, whose element is the result: the
// cast is active, has no adjoint rule, and is refused by name. Without the alias (a
// dependence from source to view only) the copy looked useless and the gradient of %y
// came out zero, silently.
func.func @into(%x: memref<2xf64>, %y: memref<2xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %t = memref.alloca() : memref<2xf64>
  %d = "memref.cast"(%t) : (memref<2xf64>) -> memref<?xf64>
  %yd = "memref.cast"(%y) : (memref<2xf64>) -> memref<?xf64>
  "memref.copy"(%yd, %d) : (memref<?xf64>, memref<?xf64>) -> ()
  %v = memref.load %t[%c0] : memref<2xf64>
  %r = arith.mulf %v, %v : f64
  func.return %r : f64
}

// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors-alias.mlir:12:3: 'memref.cast' cannot be differentiated
// CHECK-NOT: Traceback
