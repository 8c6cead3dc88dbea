func.func @newton(%c: memref<6xf64>, %r: memref<6xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 6 : index
  %max = arith.constant 50 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %three = arith.constant 3.0 : f64
  %tol = arith.constant 1.0e-12 : f64
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {
    %ci = memref.load %c[%i] : memref<6xf64>
    %root:2 = scf.while (%x = %ci, %it = %c0) : (f64, index) -> (f64, index) {
      %x2 = arith.mulf %x, %x : f64
      %x3 = arith.mulf %x2, %x : f64
      %g = arith.addf %x3, %x : f64
      %f = arith.subf %g, %ci : f64
      %af = math.absf %f : f64
      %far = arith.cmpf ogt, %af, %tol : f64
      %more = arith.cmpi slt, %it, %max : index
      %go = arith.andi %far, %more : i1
      scf.condition(%go) %x, %it : f64, index
    } do {
    ^bb0(%x: f64, %it: index):
      %x2 = arith.mulf %x, %x : f64
      %x3 = arith.mulf %x2, %x : f64
      %g = arith.addf %x3, %x : f64
      %f = arith.subf %g, %ci : f64
      %t = arith.mulf %three, %x2 : f64
      %df = arith.addf %t, %one : f64
      %step = arith.divf %f, %df : f64
      %xn = arith.subf %x, %step : f64
      %itn = arith.addi %it, %c1 : index
      scf.yield %xn, %itn : f64, index
    }
    memref.store %root#0, %r[%i] : memref<6xf64>
    %sq = arith.mulf %root#0, %root#0 : f64
    %l1 = arith.addf %l, %sq : f64
    scf.yield %l1 : f64
  }
  func.return %loss : f64
}
