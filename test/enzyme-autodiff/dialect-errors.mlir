// RUN: tapeflow-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @wrong_sizes(%buf: memref<?xf64>, %i: index, %x: f64) {
  enzyme.store %x, %buf[%i] ([]) : memref<?xf64>
  func.return
}
// CHECK: expected 1 sizes (one per dynamic dimension), got 0

// -----

func.func @wrong_element(%c: !enzyme.Cache<f64>, %x: f32) {
  "enzyme.push"(%c, %x) : (!enzyme.Cache<f64>, f32) -> ()
  func.return
}
// CHECK: dialect-errors.mlir:12:3: 'enzyme.push' operand 'value' {{.*}} f64 expected from variable 'T', but got f32
