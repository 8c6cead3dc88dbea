// A shadow of dynamic shape is sized from its primal, given in --inputs: it need not be
// passed by hand (by default, and with --zero under --plain-fill); tapeflow-sim too.
// d(sum x^2)/dx = 2x, so the shadow ends as twice the input.
// RUN: python -c "import numpy; numpy.save('%t.npy', [1.0, 2.0, 3.0])"
// RUN: tapeflow-opt %s --tapeflow -o %t.mlir
// RUN: tapeflow-run %t.mlir --entry f_grad --inputs 0=%t.npy --args 3 1.0 | filecheck %s
// RUN: tapeflow-run %t.mlir --entry f_grad --inputs 0=%t.npy --plain-fill --zero 1 --args 3 1.0 | filecheck %s
// RUN: tapeflow-sim %t.mlir --entry f_grad --inputs 0=%t.npy --zero 1 --args 3 1.0 | filecheck %s --check-prefix=SIM
// The primal itself still has no default:
// RUN: not tapeflow-run %t.mlir --entry f_grad --args 3 1.0 2>&1 | filecheck %s --check-prefix=ERR

// CHECK:      arg[0]: memref<?xf64> = [1.0, 2.0, 3.0]
// CHECK-NEXT: arg[1]: memref<?xf64> = [2.0, 4.0, 6.0]
// SIM: cycles:
// ERR: error: argument 0 (memref<?xf64>) has a dynamic shape: give its data with --inputs
// ERR-NOT: Traceback

func.func @f(%x: memref<?xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %sq = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %sq : f64
    scf.yield %s : f64
  }
  func.return %sum : f64
}
