// REQUIRES: enzyme
// RUN: not tapeflow-opt %s -p enzyme-autodiff 2>&1 | filecheck %s

// A kernel Enzyme-MLIR cannot take: one located error line with Enzyme's own message
// (which its library writes to stderr: captured, not printed), no traceback.

func.func @f(%x: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<4xf64>
  %b = math.erf %a : f64
  func.return %b : f64
}
// CHECK-NOT: loc(
// CHECK: error: {{.*}}errors.mlir:10:3: Enzyme-MLIR cannot differentiate @f: could not compute the adjoint for this operation ('math.erf')
// CHECK-NOT: Traceback
