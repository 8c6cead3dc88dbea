// RUN: tapeflow-opt %s -p tapeflow-lower-tape | filecheck %s
// RUN: tapeflow-opt %s -p tapeflow-lower-tape | tapeflow-run - -e main --args 2.5 | filecheck %s --check-prefix=VALUE

// A cache passed to a call, or received as an argument (the caches of recursive
// functions, tapeflow-autodiff's kept calls), is Enzyme's growable stack passed by
// reference: its {elements, size, capacity} memrefs replace it in the signature and the
// call, so the callee pushes on the caller's stack.
func.func @push_twice(%c: !tape.cache<f64>, %x: f64) {
  tape.push %c, %x : !tape.cache<f64>
  %y = arith.mulf %x, %x : f64
  tape.push %c, %y : !tape.cache<f64>
  func.return
}
func.func @main(%x: f64) -> f64 {
  %c = tape.init : !tape.cache<f64>
  func.call @push_twice(%c, %x) : (!tape.cache<f64>, f64) -> ()
  %a = tape.pop %c : !tape.cache<f64>
  %b = tape.pop %c : !tape.cache<f64>
  tape.free %c : !tape.cache<f64>
  %r = arith.subf %a, %b : f64
  func.return %r : f64
}

// CHECK:      func.func @push_twice(%{{.*}}: memref<memref<?xf64>>, %{{.*}}: memref<index>, %{{.*}}: memref<index>, %x: f64) {
// CHECK:      func.func @main(%x: f64) -> f64 {
// CHECK:        func.call @push_twice(%{{.*}}, %{{.*}}, %{{.*}}, %x) : (memref<memref<?xf64>>, memref<index>, memref<index>, f64) -> ()
// CHECK-NOT:  tape.

// 2.5 * 2.5 - 2.5 (LIFO):
// VALUE: result[0]: f64 = 3.75
