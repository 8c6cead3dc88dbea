// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s
// RUN: tapeflow-opt %s -p tapeflow-autodiff -o %t.mlir
// The gradient's bits are the same after tapeflow-lower-tape and through the whole
// pipeline (pytest test_autodiff.py checks it against finite differences):
// RUN: tapeflow-run %t.mlir -e pw_grad --args 1.1 2 1.0 > %t-ad.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow-lower-tape | tapeflow-run - -e pw_grad --args 1.1 2 1.0 > %t-lt.txt
// RUN: tapeflow-opt %s -p tapeflow | tapeflow-run - -e pw_grad --args 1.1 2 1.0 > %t-tf.txt
// RUN: diff %t-ad.txt %t-lt.txt
// RUN: diff %t-ad.txt %t-tf.txt
// RUN: filecheck %s --check-prefix=VALUES < %t-ad.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow-lower-tape | filecheck %s --check-prefix=LOWERED

// A recursive function's calls are not inlined: the caller's forward sweep calls
// @pw_aug (the primal with pushes), its reverse sweep @pw_rev (pops, then the recursive
// calls' reverses in reverse order). Both receive the tape caches, created once by
// @pw_grad: every call pushes on and pops from the same LIFO stacks.
func.func @pw(%x: f64, %a: memref<3xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (f64) {
    scf.yield %one : f64
  } else {
    %m = arith.subi %n, %c1 : index
    %i = arith.remui %n, %c3 : index
    %v = memref.load %a[%i] : memref<3xf64>
    %w = arith.mulf %v, %x : f64
    memref.store %w, %a[%i] : memref<3xf64>
    %s = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %w) -> (f64) {
      %rec = func.call @pw(%acc, %a, %m) : (f64, memref<3xf64>, index) -> f64
      %p = arith.mulf %rec, %x : f64
      scf.yield %p : f64
    }
    scf.yield %s : f64
  }
  func.return %r : f64
}

// CHECK:      func.func private @pw_aug(%x: f64, %a: memref<3xf64>, %n: index, %{{.*}}: !tape.cache<{{.*}}>
// The loop's values are pushed at the end of its body, after the call pushed its own:
// CHECK:        scf.for
// CHECK:          func.call @pw_aug(
// CHECK:          tape.push
// CHECK:          scf.yield
// CHECK:      func.func private @pw_rev(%x: f64, %a: memref<3xf64>, %d_a: memref<3xf64>, %n: index, %seed: f64, %{{.*}}: !tape.cache<
// ... and popped at the start of its reverse, before the call's reverse:
// CHECK:        scf.for
// CHECK:          tape.pop
// CHECK:          func.call @pw_rev(
// CHECK:      func.func @pw_grad(%{{.*}}: f64, %{{.*}}: memref<3xf64>, %{{.*}}: memref<3xf64>, %{{.*}}: index, %{{.*}}: f64) -> f64 {
// CHECK-NEXT:   tape.init
// CHECK:        func.call @pw_aug(
// CHECK-NEXT:   func.call @pw_rev(
// CHECK:        tape.free

// LOWERED:    func.func private @pw_rev({{.*}}: memref<memref<?xf64>>, %{{[0-9]+}}: memref<index>, %{{[0-9]+}}: memref<index>
// LOWERED-NOT: tape.

// VALUES:      result[0]: f64 = {{[-0-9]}}
// VALUES-NEXT: arg[1]: memref<3xf64>
// VALUES-NEXT: arg[2]: memref<3xf64> = [{{[-0-9]}}
