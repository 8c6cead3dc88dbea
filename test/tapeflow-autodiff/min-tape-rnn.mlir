// RUN: tapeflow-opt %S/../python/Inputs/rnn_step.mlir -p tapeflow-autodiff | filecheck %s
// RUN: tapeflow-opt %S/../python/Inputs/rnn_step.mlir -p tapeflow-autodiff,tapeflow-lower-tape | filecheck %s --check-prefix=LOWER

// Why: issue 10's RNN step, z = W h + U x; h' = tanh(z). The adjoint of tanh needs h',
// recomputable as tanh(z), z as the sum of two reduction loops' results; recomputing it
// all would cache both partial sums (two f64 per (t, i), twice Enzyme's tape). min-tape
// caches the value nearest the sources that carries them all: z, one f64 per (t, i), and
// recomputes tanh from it in the reverse sweep. (The kernel is checked against finite
// differences in test/python/transforms/test_min_tape.py.)

// CHECK-LABEL: func.func @rnn_grad
// CHECK-NEXT:    %[[Z:.*]] = tape.init : !tape.cache<f64>
// CHECK-NOT:     tape.init
// CHECK-NOT:     tape.push
// CHECK:         %z = arith.addf %wh, %ux : f64
// CHECK-NEXT:    tape.push %[[Z]], %z : !tape.cache<f64>
// CHECK-NEXT:    %hn = math.tanh %z : f64
// CHECK-NOT:     tape.push
// CHECK:         %[[P:.*]] = tape.pop %[[Z]] : !tape.cache<f64>
// CHECK-NOT:     tape.pop
// CHECK:         math.tanh %[[P]] : f64
// CHECK-NOT:     tape.pop
// CHECK:         tape.free %[[Z]] : !tape.cache<f64>

// One 3 x 4 f64 array (96 bytes; it was two).
// LOWER-LABEL: func.func @rnn_grad
// LOWER-NEXT:    memref.alloc() {tapeflow.tape} : memref<3x4xf64>
// LOWER-NOT:     {tapeflow.tape}
