// REQUIRES: mlir-native
// RUN: tapeflow-exec %s -p 'tapeflow{policy=cache-all}' --entry dyn_grad --args 8 1.0 --emit-mlir %t.native.mlir > %t.native.txt
// RUN: filecheck %s --check-prefix=NATIVE < %t.native.mlir
// RUN: filecheck %s --check-prefix=GRAD < %t.native.txt
// RUN: tapeflow-exec %s -p 'tapeflow{machine=accel-salam policy=cache-all}' --entry dyn_grad --args 8 1.0 --emit-mlir %t.accel.mlir > %t.accel.txt
// RUN: filecheck %s --check-prefix=ACCEL < %t.accel.mlir
// RUN: tapeflow-exec %s -p 'tapeflow-autodiff{policy=cache-all},tapeflow-lower-tape' --entry dyn_grad --args 8 1.0 > %t.enzyme.txt
// RUN: diff %t.native.txt %t.enzyme.txt
// RUN: diff %t.native.txt %t.accel.txt
// RUN: not tapeflow-exec %s -p 'tapeflow{machine=no-such-machine}' --entry dyn_grad --args 8 1.0 2>&1 | filecheck %s --check-prefix=MACHINE
// RUN: not tapeflow-exec %s -p 'tapeflw' --entry dyn_grad --args 8 1.0 2>&1 | filecheck %s --check-prefix=PASS

// `tapeflow-exec -p PIPELINE` runs the passes first; a `tapeflow{...}` that names no
// machine decides for `machine=native` (docs/CONTRACTS.md, cost model rule 4), not for
// tapeflow-opt's default machine. A trip count known only at run time tells them apart:
// - native: nothing streamed, Enzyme's layout exactly (an array sized at the loop's
//   entry), as `tapeflow-autodiff,tapeflow-lower-tape` gives;
// - accel-salam, named: its cost model streams the cache (tiles of records in layers).
// All three compute the same gradient, bit for bit: d(sum tanh(x)^2)/dx =
// 2 tanh(x) (1 - tanh(x)^2); for x[0] = 0.2739233746429086 (the fill rule) NumPy gives
// 0.49635882286615973.
func.func @dyn(%x: memref<8xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<8xf64>
    %t = math.tanh %v : f64
    %s = arith.mulf %t, %t : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}

// NATIVE-LABEL: func.func @dyn_grad(
// NATIVE-NOT:     x{{[0-9]+}}xf64>
// NATIVE:         memref.alloc(%{{.*}}) {tapeflow.tape} : memref<?xf64>
// NATIVE-NOT:     x{{[0-9]+}}xf64>
// NATIVE-LABEL: func.func @__tapeflow_main

// ACCEL-LABEL: func.func @dyn_grad(
// ACCEL:         memref.alloc(%{{.*}}) : memref<?x{{[0-9]+}}xf64>
// ACCEL-LABEL: func.func @__tapeflow_main

// GRAD: arg[1]: memref<8xf64> = [0.49635882286615973,

// MACHINE: error: tapeflow: machine 'no-such-machine'
// MACHINE-NOT: Traceback

// PASS: error: pass-pipeline:1:1: unknown pass 'tapeflw' (did you mean 'tapeflow'?)
// PASS-NOT: Traceback
