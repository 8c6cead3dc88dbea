// Issue #11 bug 1: with a loop starting at 1 (record index `i - 1`, a hoisted constant -1)
// and one layer of one tile (commit guard `g >= 1 - depth`, the same constant -1 at depth
// 2), tapeflow-stream erased the dead record index with its constant before the guard used
// it: "Operation using value defined out of its IsolatedFromAbove parent". The output must
// verify and compute the autodiff IR's gradients, bit for bit, at every depth.

// RUN: tapeflow-opt %s -p 'tapeflow-autodiff{functions=kernel}' | tapeflow-run - --entry kernel_grad --args 1.0 > %t.ref
// RUN: tapeflow-opt %s -p 'tapeflow{functions=kernel depth=2 mode=always}' | tapeflow-run - --entry kernel_grad --args 1.0 > %t.d2
// RUN: diff %t.ref %t.d2
// RUN: tapeflow-opt %s -p 'tapeflow{functions=kernel depth=3 mode=always}' | tapeflow-run - --entry kernel_grad --args 1.0 > %t.d3
// RUN: diff %t.ref %t.d3
// RUN: tapeflow-opt %s -p 'tapeflow{functions=kernel depth=4 mode=always}' | tapeflow-run - --entry kernel_grad --args 1.0 > %t.d4
// RUN: diff %t.ref %t.d4
// RUN: tapeflow-opt %s -p 'tapeflow{functions=kernel depth=2 mode=always}' | filecheck %s

func.func @kernel(%a: memref<3xf64>) -> f64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %r1 = scf.for %i = %c1 to %c2 step %c1 iter_args(%s = %z) -> (f64) {
    %x = memref.load %a[%i] : memref<3xf64>
    %y = arith.mulf %x, %x : f64
    %t = arith.addf %s, %y : f64
    scf.yield %t : f64
  }
  %r2 = scf.for %i = %c1 to %c2 step %c2 iter_args(%s = %r1) -> (f64) {
    %x = memref.load %a[%i] : memref<3xf64>
    %y = math.sin %x : f64
    memref.store %y, %a[%i] : memref<3xf64>
    %t = arith.mulf %y, %y : f64
    %u = arith.addf %s, %t : f64
    scf.yield %u : f64
  }
  func.return %r2 : f64
}

// The commit guard compares with the -1 that is still defined in the entry block.
// CHECK-LABEL: func.func @kernel_grad
// CHECK:         %[[M1:.*]] = arith.constant -1 : index
// CHECK:         stream.commit
// CHECK-NEXT:    arith.cmpi sge, %{{.*}}, %[[M1]] : index
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      stream.wait
