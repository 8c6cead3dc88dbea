func.func @trisolve(%L: memref<1024x1024xf64>, %b: memref<1024xf64>, %x: memref<1024xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {
    %bi = memref.load %b[%i] : memref<1024xf64>
    %s = scf.for %j = %c0 to %i step %c1 iter_args(%acc = %bi) -> (f64) {
      %lij = memref.load %L[%i, %j] : memref<1024x1024xf64>
      %xj = memref.load %x[%j] : memref<1024xf64>
      %p = arith.mulf %lij, %xj : f64
      %a = arith.subf %acc, %p : f64
      scf.yield %a : f64
    }
    %d = memref.load %L[%i, %i] : memref<1024x1024xf64>
    %xi = arith.divf %s, %d : f64
    memref.store %xi, %x[%i] : memref<1024xf64>
    %sq = arith.mulf %xi, %xi : f64
    %h = arith.mulf %half, %sq : f64
    %l1 = arith.addf %l, %h : f64
    scf.yield %l1 : f64
  }
  func.return %loss : f64
}
