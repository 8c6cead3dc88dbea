// Bad input: an error with the location, a non-zero exit, no traceback, no output.

// RUN: not tapeflow-opt %s --tapeflow-regions 2>&1 | filecheck %s
// CHECK: error: {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow-regions{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPT
// OPT: error: {{.*}}bogus
// OPT-NOT: Traceback

func.func @bad(%x: f64) {
  %t = tape.init : !tape.cache<f32>
  tape.push %t, %x : !tape.cache<f32>
  func.return
}
