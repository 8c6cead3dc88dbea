func.func @dp(%a: memref<1024xf64>, %b: memref<1024xf64>, %D: memref<1025x1025xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 1024 : index
  %cM = arith.constant 1024 : index
  %cN1 = arith.constant 1025 : index
  %cM1 = arith.constant 1025 : index
  %w = arith.constant 0.75 : f64
  %decay = arith.constant 0.9 : f64
  scf.for %i = %c1 to %cN1 step %c1 {
    %im = arith.subi %i, %c1 : index
    %ai = memref.load %a[%im] : memref<1024xf64>
    scf.for %j = %c1 to %cM1 step %c1 {
      %jm = arith.subi %j, %c1 : index
      %bj = memref.load %b[%jm] : memref<1024xf64>
      %match = arith.cmpf ogt, %ai, %bj : f64
      %v = scf.if %match -> (f64) {
        %diag = memref.load %D[%im, %jm] : memref<1025x1025xf64>
        %e = arith.subf %ai, %bj : f64
        %e2 = arith.mulf %e, %e : f64
        %ne2 = arith.negf %e2 : f64
        %g = math.exp %ne2 : f64
        %wd = arith.mulf %w, %diag : f64
        %m = arith.addf %wd, %g : f64
        scf.yield %m : f64
      } else {
        %up = memref.load %D[%im, %j] : memref<1025x1025xf64>
        %left = memref.load %D[%i, %jm] : memref<1025x1025xf64>
        %su = math.sin %up : f64
        %sl = math.sin %left : f64
        %lt = arith.cmpf olt, %su, %sl : f64
        %mn = arith.select %lt, %su, %sl : f64
        %m = arith.mulf %decay, %mn : f64
        scf.yield %m : f64
      }
      memref.store %v, %D[%i, %j] : memref<1025x1025xf64>
    }
  }
  %loss = memref.load %D[%cN, %cM] : memref<1025x1025xf64>
  func.return %loss : f64
}
