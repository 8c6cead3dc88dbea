// REQUIRES: enzyme
// RUN: not tapeflow-opt %s -p enzyme-autodiff 2>&1 | filecheck %s

// Enzyme-MLIR 0.0.16 has no adjoint for scf.while (tapeflow-autodiff has).
func.func @w(%x: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
  %r:2 = scf.while (%i = %c0, %s = %z) : (index, f64) -> (index, f64) {
    %c = arith.cmpi slt, %i, %c4 : index
    scf.condition(%c) %i, %s : index, f64
  } do {
  ^bb0(%i: index, %s: f64):
    %a = memref.load %x[%i] : memref<4xf64>
    %p = arith.mulf %a, %a : f64
    %s2 = arith.addf %s, %p : f64
    %i2 = arith.addi %i, %c1 : index
    scf.yield %i2, %s2 : index, f64
  }
  func.return %r#1 : f64
}
// CHECK: error: {{.*}}errors-while.mlir:10:3: Enzyme-MLIR cannot differentiate @w: could not compute the adjoint for this operation ('scf.while')
