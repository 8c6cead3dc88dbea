// REQUIRES: enzyme
// RUN: tapeflow-opt %s -p enzyme-autodiff | filecheck %s
// RUN: tapeflow-opt %s -p enzyme-autodiff | tapeflow-run - --entry sumsq_grad --args 1.0 4 2.0 \
// RUN:   | filecheck %s --check-prefix=GRAD
// RUN: tapeflow-opt %s -p tapeflow-autodiff | tapeflow-run - --entry sumsq_grad --args 1.0 4 2.0 \
// RUN:   | filecheck %s --check-prefix=GRAD

// Real Enzyme-MLIR's gradient, with our AD's name and calling convention: the float
// memref %x is enzyme_dup (its shadow follows it), the float scalar %s enzyme_active (its
// gradient is returned), the index %n enzyme_const; the seed of the f64 result comes last.

func.func @sumsq(%x: memref<4xf64>, %s: f64, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %v = memref.load %x[%i] : memref<4xf64>
    %p = arith.mulf %v, %s : f64
    %q = arith.mulf %p, %v : f64
    %a = arith.addf %acc, %q : f64
    scf.yield %a : f64
  }
  func.return %r : f64
}

// CHECK:      func.func @sumsq(
// CHECK:      func.func @sumsq_grad(%{{.*}}: memref<4xf64>, %{{.*}}: memref<4xf64>, %{{.*}}: f64, %{{.*}}: index, %{{.*}}: f64) -> f64 {
// CHECK-NOT:  tapeflow.autodiff
// CHECK:      func.return

// Both gradients, bit for bit (seeded %x; s = 1, n = 4, seed 2): d/ds = 2 sum x^2 and
// dx = 4 x.
// GRAD:      result[0]: f64 = 4.129659951110145
// GRAD:      arg[1]: memref<4xf64> = [1.0956934985716344, -1.8417062898890375, -3.6722118085104425, -3.8677789157717672]
