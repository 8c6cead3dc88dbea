func.func @ragged_rnn(%X: memref<3x4xf64>, %h0: memref<3xf64>, %w: memref<2xf64>, %lens: memref<3xi32>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cB = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %wa = memref.load %w[%c0] : memref<2xf64>
  %wb = memref.load %w[%c1] : memref<2xf64>
  %loss = scf.for %b = %c0 to %cB step %c1 iter_args(%l = %zero) -> (f64) {
    %hb = memref.load %h0[%b] : memref<3xf64>
    %lb = memref.load %lens[%b] : memref<3xi32>
    %n = arith.index_cast %lb : i32 to index
    %h = scf.for %t = %c0 to %n step %c1 iter_args(%hh = %hb) -> (f64) {
      %xt = memref.load %X[%b, %t] : memref<3x4xf64>
      %a = arith.mulf %wa, %hh : f64
      %bx = arith.mulf %wb, %xt : f64
      %z = arith.addf %a, %bx : f64
      %hn = math.tanh %z : f64
      scf.yield %hn : f64
    }
    %h2 = arith.mulf %h, %h : f64
    %ln = arith.addf %l, %h2 : f64
    scf.yield %ln : f64
  }
  func.return %loss : f64
}
