// RUN: not tapeflow-opt %s -p tapeflow-lower-tape 2>&1 | filecheck %s

// A cache that does not come from tape.init (a function argument) cannot be lowered.
func.func @arg_cache(%c: !tape.cache<f64>, %x: f64) {
  tape.push %c, %x : !tape.cache<f64>
  func.return
}

// CHECK: error: {{.*}}invalid.mlir:5:3: 'tape.push' has a tape.cache operand not produced by tape.init
// CHECK-NOT: Traceback
