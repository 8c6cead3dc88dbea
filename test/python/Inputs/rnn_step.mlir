// An RNN over T = 3 steps with hidden size 4 and input size 3:
//   z = W h[t] + U x[t];  h[t+1] = tanh(z);  loss = sum_i h[T][i]^2.
// The two matrix-vector products are reductions (scf.for iter_args); their sum z enters
// tanh. Enzyme caches z per (t, i); recomputing it would cache both partial sums.
func.func @rnn(%W: memref<4x4xf64>, %U: memref<4x3xf64>, %X: memref<3x3xf64>,
               %H: memref<4x4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  scf.for %t = %c0 to %c3 step %c1 {
    %t1 = arith.addi %t, %c1 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %wh = scf.for %j = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (f64) {
        %w = memref.load %W[%i, %j] : memref<4x4xf64>
        %h = memref.load %H[%t, %j] : memref<4x4xf64>
        %p = arith.mulf %w, %h : f64
        %a2 = arith.addf %a, %p : f64
        scf.yield %a2 : f64
      }
      %ux = scf.for %k = %c0 to %c3 step %c1 iter_args(%b = %zero) -> (f64) {
        %u = memref.load %U[%i, %k] : memref<4x3xf64>
        %x = memref.load %X[%t, %k] : memref<3x3xf64>
        %q = arith.mulf %u, %x : f64
        %b2 = arith.addf %b, %q : f64
        scf.yield %b2 : f64
      }
      %z = arith.addf %wh, %ux : f64
      %hn = math.tanh %z : f64
      memref.store %hn, %H[%t1, %i] : memref<4x4xf64>
    }
  }
  %loss = scf.for %i = %c0 to %c4 step %c1 iter_args(%l = %zero) -> (f64) {
    %h = memref.load %H[%c3, %i] : memref<4x4xf64>
    %h2 = arith.mulf %h, %h : f64
    %l2 = arith.addf %l, %h2 : f64
    scf.yield %l2 : f64
  }
  func.return %loss : f64
}
