// RUN: tapeflow-opt %s --tapeflow-autodiff | tapeflow-run - --entry f_grad --args 1.0 | filecheck %s
// RUN: tapeflow-opt %s --tapeflow-autodiff | tapeflow-run - --entry f_grad --plain-fill --args 1.0 | filecheck %s --check-prefix=PLAIN

// Running a gradient: @f_grad's %x gets the data @f's %x gets (the fill rule at @f's
// position 0), and the shadow %d_x starts at zero, so it ends holding d(loss)/dx = 2x.
func.func @f(%x: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<4xf64>
    %sq = arith.mulf %a, %a : f64
    %n = arith.addf %acc, %sq : f64
    scf.yield %n : f64
  }
  func.return %sum : f64
}
// CHECK:      arg[0]: memref<4xf64> = [0.2739233746429086, -0.4604265724722594, -0.9180529521276106, -0.9669447289429418]
// CHECK-NEXT: arg[1]: memref<4xf64> = [0.5478467492858172, -0.9208531449445188, -1.8361059042552212, -1.9338894578858836]

// --plain-fill: the shadow keeps its own fill-rule values (default_rng([0, 1])).
// PLAIN:     arg[1]: memref<4xf64> = [
// PLAIN-NOT: 0.5478467492858172
