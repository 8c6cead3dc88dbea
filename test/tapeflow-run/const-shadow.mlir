// A float memref marked `tapeflow.const` (enzyme_const, as tapeflow-cc marks the constant
// arrays of a specialization `f_dc`) has no shadow in @f_grad: its primal is still filled
// as @f's argument and the shadows of the others still start at zero. (Before, one such
// argument made the layout unrecognised: the shadow got the random fill rule and the
// gradient printed was the fill plus the gradient, silently.)
// d(sum x*w)/dx = w.
// RUN: python -c "import numpy; numpy.savez('%t.npz', x=[1.0, 2.0, 3.0], w=[0.5, -1.0, 4.0])"
// RUN: tapeflow-opt %s --tapeflow-autodiff -o %t.mlir
// RUN: tapeflow-run %t.mlir --entry f_grad --inputs %t.npz --args 1.0 | filecheck %s
// RUN: tapeflow-run %t.mlir --entry f_grad --args 1.0 | filecheck %s --check-prefix=FILL

// CHECK:      arg[0]: memref<3xf64> = [1.0, 2.0, 3.0]
// CHECK-NEXT: arg[1]: memref<3xf64> = [0.5, -1.0, 4.0]
// CHECK-NEXT: arg[2]: memref<3xf64> = [0.5, -1.0, 4.0]
// The seeded fill of @f's argument 1 (w) is the shadow of x, which starts at zero:
// FILL:      arg[1]: memref<3xf64> = [[[W:.*]]]
// FILL-NEXT: arg[2]: memref<3xf64> = [[[W]]]

func.func @f(%x: memref<3xf64>, %w: memref<3xf64> {tapeflow.const}) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<3xf64>
    %b = memref.load %w[%i] : memref<3xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    scf.yield %s : f64
  }
  func.return %sum : f64
}
