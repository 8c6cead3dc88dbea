// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff{functions=other}' | filecheck %s --check-prefix=FUNCS

// Straight-line scalar code: no loop, so no tape. Float scalars are active (gradients
// returned in order), the index argument is constant, the result takes a seed at the end.
func.func @poly(%x: f64, %n: index, %y: f64) -> f64 attributes {tapeflow.autodiff} {
  %a = arith.mulf %x, %x : f64
  %b = arith.mulf %a, %y : f64
  %s = math.sin %y : f64
  %r = arith.addf %b, %s : f64
  func.return %r : f64
}

// The primal is kept as it was.
// CHECK-LABEL: func.func @poly(%x: f64, %n: index, %y: f64) -> f64 attributes {tapeflow.autodiff} {
// CHECK:         func.return %r : f64

// CHECK-LABEL: func.func @poly_grad(%x: f64, %n: index, %y: f64, %seed: f64) -> (f64, f64) {
// CHECK-NOT:     tape.
// CHECK:         %a = arith.mulf %x, %x : f64
// CHECK-NEXT:    %b = arith.mulf %a, %y : f64
// CHECK-NEXT:    %s = math.sin %y : f64
// CHECK-NEXT:    %r = arith.addf %b, %s : f64
// d(sin y) = seed * cos y
// CHECK-NEXT:    %[[COS:.*]] = math.cos %y : f64
// CHECK-NEXT:    %[[DY1:.*]] = arith.mulf %seed, %[[COS]] : f64
// d(a*y): da = seed*y, dy += seed*a
// CHECK-NEXT:    %[[DA:.*]] = arith.mulf %seed, %y : f64
// CHECK-NEXT:    %[[DY2:.*]] = arith.mulf %seed, %a : f64
// CHECK-NEXT:    %[[DY:.*]] = arith.addf %[[DY1]], %[[DY2]] : f64
// d(x*x): both operands are %x
// CHECK-NEXT:    %[[DX1:.*]] = arith.mulf %[[DA]], %x : f64
// CHECK-NEXT:    %[[DX2:.*]] = arith.mulf %[[DA]], %x : f64
// CHECK-NEXT:    %[[DX:.*]] = arith.addf %[[DX1]], %[[DX2]] : f64
// CHECK-NEXT:    func.return %[[DX]], %[[DY]] : f64, f64
// CHECK-NEXT:  }

// Not marked: not differentiated.
func.func @other(%x: f64) -> f64 {
  func.return %x : f64
}
// CHECK-LABEL: func.func @other
// CHECK-NOT:   func.func @other_grad

// With functions=other, @other is differentiated too (a float result: one seed; the
// gradient of %x is the seed).
// FUNCS-LABEL: func.func @poly_grad(
// FUNCS-LABEL: func.func @other_grad(%x: f64, %seed: f64) -> f64 {
// FUNCS-NEXT:    func.return %seed : f64
// FUNCS-NEXT:  }
