// RUN: tapeflow-run %s --entry f --args 2.0 | filecheck %s
// RUN: tapeflow-run %s --entry f_grad --zero 1 --args 2.0 | filecheck %s --check-prefix=GRAD
// RUN: tapeflow-run %s --entry f --seed 7 --args 2.0 | filecheck %s --check-prefix=SEED
// RUN: tapeflow-opt %s | tapeflow-run - --entry f --args 2.0 | filecheck %s

// y[i] = s * tanh(x[i]); returns sum(y). %x is filled by the default rule
// (default_rng([0, 0]).uniform(-1, 1, 4)), %y by default_rng([0, 1]) and then
// overwritten; both are printed after the run.
func.func @f(%x: memref<4xf64>, %y: memref<4xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<4xf64>
    %t = math.tanh %a : f64
    %m = arith.mulf %t, %s : f64
    memref.store %m, %y[%i] : memref<4xf64>
    %n = arith.addf %acc, %m : f64
    scf.yield %n : f64
  }
  func.return %sum : f64
}
// CHECK:      result[0]: f64 = -3.27098735783659
// CHECK-NEXT: arg[0]: memref<4xf64> = [0.2739233746429086, -0.4604265724722594, -0.9180529521276106, -0.9669447289429418]
// CHECK-NEXT: arg[1]: memref<4xf64> = [0.534543504996061, -0.8608636318692161, -1.44995003333873, -1.4947171976247047]

// A hand-written gradient of sum(s * x[i]^2) in Enzyme's convention: the shadow %dx
// (zeroed with --zero 1) receives 2 * s * x[i]; the tape carries x[i] from the forward
// loop to the reverse loop.
func.func @f_grad(%x: memref<4xf64>, %dx: memref<4xf64>, %s: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f64
  %cache = tape.init : !tape.cache<f64>
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xf64>
    tape.push %cache, %a : !tape.cache<f64>
  }
  scf.for %k = %c0 to %c4 step %c1 {
    %i = arith.subi %c3, %k : index
    %a = tape.pop %cache : !tape.cache<f64>
    %g = arith.mulf %a, %s : f64
    %g2 = arith.mulf %g, %two : f64
    %old = memref.load %dx[%i] : memref<4xf64>
    %new = arith.addf %old, %g2 : f64
    memref.store %new, %dx[%i] : memref<4xf64>
  }
  tape.free %cache : !tape.cache<f64>
  func.return
}
// GRAD-NOT:  result[
// GRAD:      arg[0]: memref<4xf64> = [0.2739233746429086, -0.4604265724722594, -0.9180529521276106, -0.9669447289429418]
// GRAD-NEXT: arg[1]: memref<4xf64> = [1.0956934985716344, -1.8417062898890375, -3.6722118085104425, -3.8677789157717672]

// Another seed, other values.
// SEED:     arg[0]: memref<4xf64> = [
// SEED-NOT: 0.2739233746429086
