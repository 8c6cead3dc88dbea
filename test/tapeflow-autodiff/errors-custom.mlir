// RUN: not tapeflow-opt %s -p tapeflow-autodiff 2>&1 | filecheck %s

// A custom derivative that does not take what Enzyme's convention passes is a located
// error (here the gradient forgets the result's adjoint), not a wrong program.
func.func @f(%x: f64) -> f64 attributes {enzyme_augment = @aug, enzyme_gradient = @grad} {
  func.return %x : f64
}
func.func @aug(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @grad(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @h(%x: f64) -> f64 attributes {tapeflow.autodiff} {
  %y = func.call @f(%x) : (f64) -> f64
  func.return %y : f64
}
// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors-custom.mlir:15:3: 'func.call' the custom derivative @grad takes (f64); Enzyme's convention passes (f64, f64)
// CHECK-NOT: Traceback
