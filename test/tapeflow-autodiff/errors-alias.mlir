// RUN: not tapeflow-opt %s -p tapeflow-autodiff 2>&1 | filecheck %s

// A view op (`memref.cast`, `subview`, `reinterpret_cast`, `expand/collapse_shape`) is
// another name for its source's memory: activity analysis makes the two depend on each
// other both ways. Here the copy into the view fills %t, whose element is the result: the
// view is active, has no adjoint rule, and is refused by name. Without the alias (a
// dependence from source to view only) the copy looked useless and the gradient of %y
// came out zero, silently. (A `memref.cast` has a rule: its shadow is the cast of its
// source's.)
func.func @into(%x: memref<2xf64>, %y: memref<1x2xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %t = memref.alloca() : memref<2xf64>
  %d = "memref.expand_shape"(%t) <{reassociation = [[0, 1]], static_output_shape = array<i64: 1, 2>}> : (memref<2xf64>) -> memref<1x2xf64>
  "memref.copy"(%y, %d) : (memref<1x2xf64>, memref<1x2xf64>) -> ()
  %v = memref.load %t[%c0] : memref<2xf64>
  %r = arith.mulf %v, %v : f64
  func.return %r : f64
}

// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors-alias.mlir:13:3: 'memref.expand_shape' cannot be differentiated
// CHECK-NOT: Traceback
