func.func @conv2d(%X: memref<2x4x4xf64>, %K: memref<2x2x3x3xf64>, %bias: memref<2xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %cCI = arith.constant 2 : index
  %cCO = arith.constant 2 : index
  %cHo = arith.constant 2 : index
  %cWo = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %slope = arith.constant 0.01 : f64
  %loss = scf.for %co = %c0 to %cCO step %c1 iter_args(%l0 = %zero) -> (f64) {
    %bv = memref.load %bias[%co] : memref<2xf64>
    %l1 = scf.for %i = %c0 to %cHo step %c1 iter_args(%la = %l0) -> (f64) {
      %l2 = scf.for %j = %c0 to %cWo step %c1 iter_args(%lb = %la) -> (f64) {
        %acc = scf.for %ci = %c0 to %cCI step %c1 iter_args(%s0 = %bv) -> (f64) {
          %s1 = scf.for %ki = %c0 to %c3 step %c1 iter_args(%sa = %s0) -> (f64) {
            %s2 = scf.for %kj = %c0 to %c3 step %c1 iter_args(%sb = %sa) -> (f64) {
              %ii = arith.addi %i, %ki : index
              %jj = arith.addi %j, %kj : index
              %x = memref.load %X[%ci, %ii, %jj] : memref<2x4x4xf64>
              %w = memref.load %K[%co, %ci, %ki, %kj] : memref<2x2x3x3xf64>
              %p = arith.mulf %x, %w : f64
              %sn = arith.addf %sb, %p : f64
              scf.yield %sn : f64
            }
            scf.yield %s2 : f64
          }
          scf.yield %s1 : f64
        }
        %pos = arith.cmpf ogt, %acc, %zero : f64
        %neg = arith.mulf %slope, %acc : f64
        %act = arith.select %pos, %acc, %neg : f64
        %sq = arith.mulf %act, %act : f64
        %ln = arith.addf %lb, %sq : f64
        scf.yield %ln : f64
      }
      scf.yield %l2 : f64
    }
    scf.yield %l1 : f64
  }
  func.return %loss : f64
}
