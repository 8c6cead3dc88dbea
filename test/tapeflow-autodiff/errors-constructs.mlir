// RUN: not tapeflow-opt %s -p tapeflow-autodiff --split-input-file 2>&1 | filecheck %s

// Unsupported constructs are diagnostics naming the op and its location (one per chunk).

// An active buffer allocated inside a loop with a size computed in the loop (it cannot be
// hoisted to the function body, and its shadow would not survive to the reverse sweep).
func.func @alloc_in_loop(%x: memref<2xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (f64) {
    %m = arith.addi %i, %c1 : index
    %t = memref.alloc(%m) : memref<?xf64>
    %v = memref.load %x[%i] : memref<2xf64>
    memref.store %v, %t[%c0] : memref<?xf64>
    %w = memref.load %t[%c0] : memref<?xf64>
    %a = arith.addf %acc, %w : f64
    memref.dealloc %t : memref<?xf64>
    scf.yield %a : f64
  }
  func.return %r : f64
}
// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors-constructs.mlir:14:5: 'memref.alloc' unsupported: an active buffer allocated or freed inside a loop or branch
// CHECK-NOT: Traceback
