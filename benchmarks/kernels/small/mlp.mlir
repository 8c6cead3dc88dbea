func.func @mlp(%X: memref<3x4xf64>, %W1: memref<4x5xf64>, %b1: memref<5xf64>, %W2: memref<5x2xf64>, %b2: memref<2xf64>, %Y: memref<3x2xf64>, %Hs: memref<3x5xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cB = arith.constant 3 : index
  %cD = arith.constant 4 : index
  %cH = arith.constant 5 : index
  %cO = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %loss = scf.for %b = %c0 to %cB step %c1 iter_args(%lb = %zero) -> (f64) {
    scf.for %h = %c0 to %cH step %c1 {
      %bias = memref.load %b1[%h] : memref<5xf64>
      %z = scf.for %d = %c0 to %cD step %c1 iter_args(%s = %bias) -> (f64) {
        %x = memref.load %X[%b, %d] : memref<3x4xf64>
        %w = memref.load %W1[%d, %h] : memref<4x5xf64>
        %p = arith.mulf %x, %w : f64
        %s1 = arith.addf %s, %p : f64
        scf.yield %s1 : f64
      }
      %a = math.tanh %z : f64
      memref.store %a, %Hs[%b, %h] : memref<3x5xf64>
      scf.yield
    }
    %lo = scf.for %o = %c0 to %cO step %c1 iter_args(%l = %lb) -> (f64) {
      %bias2 = memref.load %b2[%o] : memref<2xf64>
      %y = scf.for %h2 = %c0 to %cH step %c1 iter_args(%s = %bias2) -> (f64) {
        %hv = memref.load %Hs[%b, %h2] : memref<3x5xf64>
        %w = memref.load %W2[%h2, %o] : memref<5x2xf64>
        %p = arith.mulf %hv, %w : f64
        %s1 = arith.addf %s, %p : f64
        scf.yield %s1 : f64
      }
      %t = memref.load %Y[%b, %o] : memref<3x2xf64>
      %e = arith.subf %y, %t : f64
      %e2 = arith.mulf %e, %e : f64
      %he2 = arith.mulf %half, %e2 : f64
      %l1 = arith.addf %l, %he2 : f64
      scf.yield %l1 : f64
    }
    scf.yield %lo : f64
  }
  func.return %loss : f64
}
