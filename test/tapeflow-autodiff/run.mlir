// RUN: tapeflow-opt %s -p tapeflow-autodiff | tapeflow-run - --entry cube_grad --args 3.0 2.0 1.0 | filecheck %s
// RUN: tapeflow-opt %s -p tapeflow-autodiff | tapeflow-run - --entry sumsq_grad --args 1.0 | filecheck %s --check-prefix=MEM

// The gradient runs: f(x, y) = x*x*y at (3, 2) with seed 1 gives (2xy, x^2) = (12, 9).
func.func @cube(%x: f64, %y: f64) -> f64 attributes {tapeflow.autodiff} {
  %a = arith.mulf %x, %x : f64
  %r = arith.mulf %a, %y : f64
  func.return %r : f64
}

// sum(x^2) over x filled by tapeflow-run's rule; the shadow ends as 2x.
func.func @sumsq(%x: memref<2xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<2xf64>
    %v2 = arith.mulf %v, %v : f64
    %a = arith.addf %acc, %v2 : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}

// CHECK:      result[0]: f64 = 12.0
// CHECK-NEXT: result[1]: f64 = 9.0

// MEM:      arg[0]: memref<2xf64> = [0.2739233746429086, -0.4604265724722594]
// MEM-NEXT: arg[1]: memref<2xf64> = [0.5478467492858172, -0.9208531449445188]
