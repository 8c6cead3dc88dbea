func.func @softmax_ce(%Z: memref<512x1024xf64>, %labels: memref<512xi32>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cB = arith.constant 512 : index
  %cC = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f64
  %loss = scf.for %b = %c0 to %cB step %c1 iter_args(%l = %zero) -> (f64) {
    %z0 = memref.load %Z[%b, %c0] : memref<512x1024xf64>
    %m = scf.for %j = %c1 to %cC step %c1 iter_args(%mx = %z0) -> (f64) {
      %z = memref.load %Z[%b, %j] : memref<512x1024xf64>
      %gt = arith.cmpf ogt, %z, %mx : f64
      %mn = arith.select %gt, %z, %mx : f64
      scf.yield %mn : f64
    }
    %se = scf.for %j = %c0 to %cC step %c1 iter_args(%sa = %zero) -> (f64) {
      %z = memref.load %Z[%b, %j] : memref<512x1024xf64>
      %sh = arith.subf %z, %m : f64
      %e = math.exp %sh : f64
      %sn = arith.addf %sa, %e : f64
      scf.yield %sn : f64
    }
    %lse = math.log %se : f64
    %lab32 = memref.load %labels[%b] : memref<512xi32>
    %lab = arith.index_cast %lab32 : i32 to index
    %zl = memref.load %Z[%b, %lab] : memref<512x1024xf64>
    %lm = arith.addf %lse, %m : f64
    %lb = arith.subf %lm, %zl : f64
    %ln = arith.addf %l, %lb : f64
    scf.yield %ln : f64
  }
  func.return %loss : f64
}
