func.func @backsub(%U: memref<5x5xf64>, %y: memref<5xf64>, %x: memref<5xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 5 : index
  %cN1 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %loss = scf.for %k = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {
    %i = arith.subi %cN1, %k : index
    %yi = memref.load %y[%i] : memref<5xf64>
    %i1 = arith.addi %i, %c1 : index
    %s = scf.for %j = %i1 to %cN step %c1 iter_args(%acc = %yi) -> (f64) {
      %uij = memref.load %U[%i, %j] : memref<5x5xf64>
      %xj = memref.load %x[%j] : memref<5xf64>
      %p = arith.mulf %uij, %xj : f64
      %a = arith.subf %acc, %p : f64
      scf.yield %a : f64
    }
    %d = memref.load %U[%i, %i] : memref<5x5xf64>
    %xi = arith.divf %s, %d : f64
    memref.store %xi, %x[%i] : memref<5xf64>
    %sq = arith.mulf %xi, %xi : f64
    %h = arith.mulf %half, %sq : f64
    %l1 = arith.addf %l, %h : f64
    scf.yield %l1 : f64
  }
  func.return %loss : f64
}
