// Executing caches: values pop in reverse push order; popping an empty cache is a
// diagnostic naming the op and its location, with no traceback.

// RUN: tapeflow-run %s --entry lifo --args 1.0 2.0 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-run %s --entry underflow --args 1.0 2>&1 | filecheck %s --check-prefix=EMPTY

func.func @lifo(%a: f64, %b: f64) -> (f64, f64) {
  %c = tape.init : !tape.cache<f64>
  tape.push %c, %a : !tape.cache<f64>
  tape.push %c, %b : !tape.cache<f64>
  %x = tape.pop %c : !tape.cache<f64>
  %y = tape.pop %c : !tape.cache<f64>
  tape.free %c : !tape.cache<f64>
  func.return %x, %y : f64, f64
}
// OUT: result[0]: f64 = 2.0
// OUT-NEXT: result[1]: f64 = 1.0

func.func @underflow(%a: f64) -> f64 {
  %c = tape.init : !tape.cache<f64>
  tape.push %c, %a : !tape.cache<f64>
  %x = tape.pop %c : !tape.cache<f64>
  %y = tape.pop %c : !tape.cache<f64>
  func.return %y : f64
}
// EMPTY: error: {{.*}}run.mlir:23:3: 'tape.pop' pop on empty cache
// EMPTY-NOT: Traceback
