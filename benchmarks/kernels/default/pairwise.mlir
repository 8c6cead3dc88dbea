func.func @pairwise(%P: memref<512x3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cN = arith.constant 512 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %eps = arith.constant 0.01 : f64
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%li = %zero) -> (f64) {
    %xi = memref.load %P[%i, %c0] : memref<512x3xf64>
    %yi = memref.load %P[%i, %c1] : memref<512x3xf64>
    %zi = memref.load %P[%i, %c2] : memref<512x3xf64>
    %i1 = arith.addi %i, %c1 : index
    %lj = scf.for %j = %i1 to %cN step %c1 iter_args(%l = %li) -> (f64) {
      %xj = memref.load %P[%j, %c0] : memref<512x3xf64>
      %yj = memref.load %P[%j, %c1] : memref<512x3xf64>
      %zj = memref.load %P[%j, %c2] : memref<512x3xf64>
      %dx = arith.subf %xi, %xj : f64
      %dy = arith.subf %yi, %yj : f64
      %dz = arith.subf %zi, %zj : f64
      %dx2 = arith.mulf %dx, %dx : f64
      %dy2 = arith.mulf %dy, %dy : f64
      %dz2 = arith.mulf %dz, %dz : f64
      %s1 = arith.addf %dx2, %dy2 : f64
      %s2 = arith.addf %s1, %dz2 : f64
      %d2 = arith.addf %s2, %eps : f64
      %r = math.sqrt %d2 : f64
      %e = arith.divf %one, %r : f64
      %ln = arith.addf %l, %e : f64
      scf.yield %ln : f64
    }
    scf.yield %lj : f64
  }
  func.return %loss : f64
}
