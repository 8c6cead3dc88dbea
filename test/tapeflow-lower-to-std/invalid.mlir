// RUN: not tapeflow-opt %s -p tapeflow-lower-to-std 2>&1 | filecheck %s

// A cache that escapes into an op the lowering does not know is a diagnostic that names
// the op and its location, not a traceback.

func.func @f(%c: i1) {
  %a = tape.init : !tape.cache<f64>
  %b = tape.init : !tape.cache<f64>
  %s = arith.select %c, %a, %b : !tape.cache<f64>
  func.return
}

// CHECK: error: {{.*}}invalid.mlir:9:3: 'arith.select' uses a tape.cache in a way tapeflow-lower-to-std cannot lower (only tape.push/pop/free of a tape.init result are)
// CHECK-NOT: Traceback
