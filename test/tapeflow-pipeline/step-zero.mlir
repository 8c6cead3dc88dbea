// Issue #11 bug 3: a constant scf.for step of 0 made `-p tapeflow` die with a
// ZeroDivisionError while counting the loop's iterations. Upstream MLIR requires a positive
// step (a constant step <= 0 was a verifier error, "constant step operand must be
// positive", and is undefined behaviour where mlir-opt accepts it), so every TapeFlow pass
// that counts iterations (the AD pass alone too: it reverses loops) names the loop
// instead: exit 1, one error line, no output.

// RUN: not tapeflow-opt %s -p 'tapeflow{functions=zero}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{functions=zero}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{functions=zero},tapeflow-regions' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{functions=zero},tapeflow-regions,tapeflow-layers' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{functions=zero},tapeflow-regions,tapeflow-stream{tile-bytes=64}' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: error: {{.*}}step-zero.mlir:[[# @LINE + 11]]:3: 'scf.for' constant step operand must be positive, got 0: the loop's trip count is undefined
// ZERO-NOT: Traceback
// ZERO-NOT: builtin.module

// RUN: rm -f %t.out && not tapeflow-opt %s -p 'tapeflow{functions=zero}' -o %t.out 2>/dev/null
// RUN: not test -e %t.out

func.func @zero(%a: memref<4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c4 step %c0 iter_args(%s = %z) -> (f64) {
    %x = memref.load %a[%i] : memref<4xf64>
    %y = math.sin %x : f64
    memref.store %y, %a[%i] : memref<4xf64>
    %t = arith.mulf %s, %y : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
