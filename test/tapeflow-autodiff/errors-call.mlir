// RUN: not tapeflow-opt %s -p tapeflow-autodiff 2>&1 | filecheck %s

// A call to a function with no body (an external declaration) cannot be differentiated.
func.func private @ext(f64) -> f64
func.func @f(%x: f64) -> f64 attributes {tapeflow.autodiff} {
  %y = func.call @ext(%x) : (f64) -> f64
  func.return %y : f64
}
// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors-call.mlir:6:3: 'func.call' cannot differentiate a call to @ext (not a function defined in this module)
// CHECK-NOT: Traceback
