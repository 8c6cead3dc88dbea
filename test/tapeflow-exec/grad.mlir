// REQUIRES: mlir-native
// RUN: tapeflow-opt %s --tapeflow | tapeflow-exec - --entry f_grad --args 1.0 --emit-mlir %t.program.mlir | filecheck %s
// RUN: filecheck %s --check-prefix=EMIT < %t.program.mlir
// RUN: not tapeflow-exec %s --entry nope 2>&1 | filecheck %s --check-prefix=ERR

// tapeflow-exec takes tapeflow-run's command line (here the gradient layout: @f's data in
// %x, a zero shadow) and prints what it prints; d(sum x^2)/dx = 2x, so arg[1] is arg[0]
// doubled, bit for bit (the same values tapeflow-run prints for this kernel).
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

// --emit-mlir (its own option) writes the upstream program that was compiled.
// EMIT: func.func @f_grad(
// EMIT-NOT: tape.

// ERR: error: no function @nope in the module (it defines @f)
// ERR-NOT: Traceback
