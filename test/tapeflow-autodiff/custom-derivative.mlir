// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s
// RUN: tapeflow-opt %s -p tapeflow-autodiff | tapeflow-run - -e h_grad --args 4.0 1.0 | filecheck %s --check-prefix=VALUE

// A function with `enzyme_augment = @aug, enzyme_gradient = @grad` (Enzyme's metadata)
// is not differentiated: the forward sweep calls @aug with each float buffer followed by
// its shadow (in place of the call when @aug returns the results, or the call has
// none); its other results are the tape, which the reverse sweep passes to @grad after
// the results' adjoints. @grad returns the float scalar arguments' gradients.
func.func @sq(%src: memref<1xf64>, %dest: memref<1xf64>) attributes {enzyme_augment = @aug_sq, enzyme_gradient = @grad_sq} {
  %c0 = arith.constant 0 : index
  %v = memref.load %src[%c0] : memref<1xf64>
  %w = arith.mulf %v, %v : f64
  memref.store %w, %dest[%c0] : memref<1xf64>
  func.return
}
func.func @aug_sq(%src: memref<1xf64>, %dsrc: memref<1xf64>, %dest: memref<1xf64>, %ddest: memref<1xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %src[%c0] : memref<1xf64>
  %w = arith.mulf %v, %v : f64
  memref.store %w, %dest[%c0] : memref<1xf64>
  func.return %v : f64
}
// Deliberately 3 * x (for x * x): the gradient must show 3 * 4 (not 2 * 4).
func.func @grad_sq(%src: memref<1xf64>, %dsrc: memref<1xf64>, %dest: memref<1xf64>, %ddest: memref<1xf64>, %saved: f64) {
  %c0 = arith.constant 0 : index
  %three = arith.constant 3.0 : f64
  %d = memref.load %ddest[%c0] : memref<1xf64>
  %t = arith.mulf %three, %saved : f64
  %g = arith.mulf %t, %d : f64
  %old = memref.load %dsrc[%c0] : memref<1xf64>
  %new = arith.addf %old, %g : f64
  memref.store %new, %dsrc[%c0] : memref<1xf64>
  %zero = arith.constant 0.0 : f64
  memref.store %zero, %ddest[%c0] : memref<1xf64>
  func.return
}
func.func @h(%x: f64) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %a = memref.alloca() : memref<1xf64>
  %b = memref.alloca() : memref<1xf64>
  memref.store %x, %a[%c0] : memref<1xf64>
  func.call @sq(%a, %b) : (memref<1xf64>, memref<1xf64>) -> ()
  %y = memref.load %b[%c0] : memref<1xf64>
  func.return %y : f64
}

// CHECK:      func.func @h_grad(%x: f64, %seed: f64) -> f64 {
// CHECK:        %[[TAPE:.*]] = func.call @aug_sq(%a, %d_a, %b, %d_b) : (memref<1xf64>, memref<1xf64>, memref<1xf64>, memref<1xf64>) -> f64
// CHECK-NOT:    func.call @sq(
// CHECK:        func.call @grad_sq(%a, %d_a, %b, %d_b, %[[TAPE]])
// CHECK:        func.return

// VALUE: result[0]: f64 = 12.0
