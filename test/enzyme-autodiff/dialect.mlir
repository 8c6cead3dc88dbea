// RUN: TAPEFLOW_ROUNDTRIP
// RUN: TAPEFLOW_GENERIC_ROUNDTRIP

// The `enzyme` dialect: Enzyme-MLIR's cache ops as its output holds them (generic form
// for init/push/pop, its own syntax for load/store), printed in a readable form.

func.func @caches(%x: f64, %m: memref<4xf64>, %n: index, %i: index) -> f64 {
  %c = "enzyme.init"() : () -> !enzyme.Cache<f64>
  "enzyme.push"(%c, %x) : (!enzyme.Cache<f64>, f64) -> ()
  %y = "enzyme.pop"(%c) : (!enzyme.Cache<f64>) -> f64
  %r = enzyme.init : !enzyme.Cache<memref<4xf64>>
  enzyme.push %r, %m : !enzyme.Cache<memref<4xf64>>
  %m2 = enzyme.pop %r : !enzyme.Cache<memref<4xf64>>
  %buf = memref.alloc(%n) : memref<?xf64>
  enzyme.store %y, %buf[%i] ([%n]) : memref<?xf64>
  %z = enzyme.load %buf[%i] ([%n]) : memref<?xf64>
  func.return %z : f64
}

// CHECK:      %c = enzyme.init : !enzyme.Cache<f64>
// CHECK-NEXT: enzyme.push %c, %x : !enzyme.Cache<f64>
// CHECK-NEXT: %y = enzyme.pop %c : !enzyme.Cache<f64>
// CHECK-NEXT: %r = enzyme.init : !enzyme.Cache<memref<4xf64>>
// CHECK-NEXT: enzyme.push %r, %m : !enzyme.Cache<memref<4xf64>>
// CHECK-NEXT: %m2 = enzyme.pop %r : !enzyme.Cache<memref<4xf64>>
// CHECK:      enzyme.store %y, %buf[%i] ([%n]) : memref<?xf64>
// CHECK-NEXT: %z = enzyme.load %buf[%i] ([%n]) : memref<?xf64>

// CHECK-GENERIC: "enzyme.init"() : () -> !enzyme.Cache<f64>
// CHECK-GENERIC: "enzyme.store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (f64, memref<?xf64>, index, index) -> ()
