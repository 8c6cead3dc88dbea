func.func @mass_spring(%x: memref<1026xf64>, %v: memref<1026xf64>, %F: memref<1026xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN1 = arith.constant 1025 : index
  %cN2 = arith.constant 1026 : index
  %cT = arith.constant 192 : index
  %zero = arith.constant 0.0 : f64
  %k = arith.constant 1.0 : f64
  %cub = arith.constant 0.5 : f64
  %dt = arith.constant 0.1 : f64
  scf.for %t = %c0 to %cT step %c1 {
    scf.for %i = %c1 to %cN1 step %c1 {
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %xm = memref.load %x[%im] : memref<1026xf64>
      %x0 = memref.load %x[%i] : memref<1026xf64>
      %xp = memref.load %x[%ip] : memref<1026xf64>
      %dl = arith.subf %x0, %xm : f64
      %dr = arith.subf %xp, %x0 : f64
      %dl2 = arith.mulf %dl, %dl : f64
      %dl3 = arith.mulf %dl2, %dl : f64
      %dr2 = arith.mulf %dr, %dr : f64
      %dr3 = arith.mulf %dr2, %dr : f64
      %lin = arith.subf %dr, %dl : f64
      %cubd = arith.subf %dr3, %dl3 : f64
      %fl = arith.mulf %k, %lin : f64
      %fc = arith.mulf %cub, %cubd : f64
      %f = arith.addf %fl, %fc : f64
      memref.store %f, %F[%i] : memref<1026xf64>
      scf.yield
    }
    scf.for %i = %c1 to %cN1 step %c1 {
      %f = memref.load %F[%i] : memref<1026xf64>
      %vi = memref.load %v[%i] : memref<1026xf64>
      %dv = arith.mulf %dt, %f : f64
      %vn = arith.addf %vi, %dv : f64
      memref.store %vn, %v[%i] : memref<1026xf64>
      %xi = memref.load %x[%i] : memref<1026xf64>
      %dx = arith.mulf %dt, %vn : f64
      %xn = arith.addf %xi, %dx : f64
      memref.store %xn, %x[%i] : memref<1026xf64>
      scf.yield
    }
    scf.yield
  }
  %loss = scf.for %i = %c0 to %cN2 step %c1 iter_args(%l = %zero) -> (f64) {
    %xi = memref.load %x[%i] : memref<1026xf64>
    %vi = memref.load %v[%i] : memref<1026xf64>
    %xx = arith.mulf %xi, %xi : f64
    %vv = arith.mulf %vi, %vi : f64
    %e = arith.addf %xx, %vv : f64
    %ln = arith.addf %l, %e : f64
    scf.yield %ln : f64
  }
  func.return %loss : f64
}
