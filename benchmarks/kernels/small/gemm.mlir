func.func @gemm(%A: memref<3x5xf64>, %B: memref<5x4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cM = arith.constant 3 : index
  %cN = arith.constant 4 : index
  %cK = arith.constant 5 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %loss = scf.for %i = %c0 to %cM step %c1 iter_args(%li = %zero) -> (f64) {
    %lj = scf.for %j = %c0 to %cN step %c1 iter_args(%l = %li) -> (f64) {
      %acc = scf.for %k = %c0 to %cK step %c1 iter_args(%s = %zero) -> (f64) {
        %a = memref.load %A[%i, %k] : memref<3x5xf64>
        %b = memref.load %B[%k, %j] : memref<5x4xf64>
        %p = arith.mulf %a, %b : f64
        %s1 = arith.addf %s, %p : f64
        scf.yield %s1 : f64
      }
      %sq = arith.mulf %acc, %acc : f64
      %h = arith.mulf %half, %sq : f64
      %l1 = arith.addf %l, %h : f64
      scf.yield %l1 : f64
    }
    scf.yield %lj : f64
  }
  func.return %loss : f64
}
