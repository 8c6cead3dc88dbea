// Asking for @F_grad of a file that holds only @F says where gradients come from.
// RUN: not tapeflow-sim %s --entry f_grad --args 1.0 2>&1 | filecheck %s
// RUN: not tapeflow-run %s --entry f_grad --args 1.0 2>&1 | filecheck %s
// RUN: not tapeflow-sim %s --entry g_grad 2>&1 | filecheck %s --check-prefix=OTHER

// CHECK: error: no function @f_grad in the module (it defines @f); @f_grad is made by tapeflow-opt: run `tapeflow-opt FILE --tapeflow -o FILE-tf.mlir` and give that file (a .c file holds the primal only)
// CHECK-NOT: Traceback

// No @g in the module: no hint about gradients.
// OTHER: error: no function @g_grad in the module (it defines @f){{$}}

func.func @f(%x: f64) -> f64 attributes {tapeflow.autodiff} {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
