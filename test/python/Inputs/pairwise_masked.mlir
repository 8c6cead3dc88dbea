// Pairwise forces over T = 3 time steps of N = 4 particles updated in place:
//   F[i] = sum_{j != i} d / (d*d + eps), d = X[i] - X[j];  X[i] += dt * F[i];
//   loss = sum_i X[i]^2.
// The mask `j != i` depends only on induction variables: recomputed, never cached. The
// branch reads X from memory the next step overwrites; its value d is cached, pushed
// T*N*(N-1) = 36 times, which is what its static stack must hold.
func.func @pairwise_masked(%X: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f64
  %eps = arith.constant 0.5 : f64
  %dt = arith.constant 0.1 : f64
  %F = memref.alloc() : memref<4xf64>
  scf.for %t = %c0 to %c3 step %c1 {
    scf.for %i = %c0 to %c4 step %c1 {
      %xi = memref.load %X[%i] : memref<4xf64>
      %f = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f64) {
        %ne = arith.cmpi ne, %j, %i : index
        %r = scf.if %ne -> (f64) {
          %xj = memref.load %X[%j] : memref<4xf64>
          %d = arith.subf %xi, %xj : f64
          %d2 = arith.mulf %d, %d : f64
          %s = arith.addf %d2, %eps : f64
          %q = arith.divf %d, %s : f64
          %acc2 = arith.addf %acc, %q : f64
          scf.yield %acc2 : f64
        } else {
          scf.yield %acc : f64
        }
        scf.yield %r : f64
      }
      memref.store %f, %F[%i] : memref<4xf64>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %X[%i] : memref<4xf64>
      %g = memref.load %F[%i] : memref<4xf64>
      %step = arith.mulf %dt, %g : f64
      %x2 = arith.addf %x, %step : f64
      memref.store %x2, %X[%i] : memref<4xf64>
    }
  }
  %loss = scf.for %i = %c0 to %c4 step %c1 iter_args(%l = %zero) -> (f64) {
    %x = memref.load %X[%i] : memref<4xf64>
    %x2 = arith.mulf %x, %x : f64
    %l2 = arith.addf %l, %x2 : f64
    scf.yield %l2 : f64
  }
  memref.dealloc %F : memref<4xf64>
  func.return %loss : f64
}
