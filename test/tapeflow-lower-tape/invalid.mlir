// RUN: not tapeflow-opt %s -p tapeflow-lower-tape 2>&1 | filecheck %s

// A cache carried through a loop (an iter_arg) cannot be lowered. (One passed to a call,
// or received as a function argument, can: shared.mlir.)
func.func @loop_cache(%x: f64) {
  %c = tape.init : !tape.cache<f64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%k = %c) -> (!tape.cache<f64>) {
    tape.push %k, %x : !tape.cache<f64>
    scf.yield %k : !tape.cache<f64>
  }
  func.return
}

// CHECK-NOT: Traceback
// CHECK: error: {{.*}}invalid.mlir:9:3: 'scf.for' uses a tape.cache in a way tapeflow-lower-tape cannot lower
// CHECK-NOT: Traceback
