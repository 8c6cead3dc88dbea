func.func @pwl(%x: memref<5xf64>, %table: memref<5xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 5 : index
  %cT = arith.constant 3 : index
  %i0 = arith.constant 0 : i64
  %iM1 = arith.constant 3 : i64
  %zero = arith.constant 0.0 : f64
  %fM = arith.constant 4.0 : f64
  scf.for %t = %c0 to %cT step %c1 {
    scf.for %i = %c0 to %cN step %c1 {
      %xi = memref.load %x[%i] : memref<5xf64>
      %s0 = arith.mulf %xi, %fM : f64
      %s1 = arith.maximumf %s0, %zero : f64
      %s = arith.minimumf %s1, %fM : f64
      %k0 = arith.fptosi %s : f64 to i64
      %lo = arith.cmpi slt, %k0, %i0 : i64
      %k1 = arith.select %lo, %i0, %k0 : i64
      %hi = arith.cmpi sgt, %k1, %iM1 : i64
      %k = arith.select %hi, %iM1, %k1 : i64
      %kf = arith.sitofp %k : i64 to f64
      %fr = arith.subf %s, %kf : f64
      %ki = arith.index_cast %k : i64 to index
      %kn = arith.addi %ki, %c1 : index
      %y0 = memref.load %table[%ki] : memref<5xf64>
      %y1 = memref.load %table[%kn] : memref<5xf64>
      %dy = arith.subf %y1, %y0 : f64
      %sl = arith.mulf %dy, %fr : f64
      %y = arith.addf %y0, %sl : f64
      memref.store %y, %x[%i] : memref<5xf64>
      scf.yield
    }
    scf.yield
  }
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%l = %zero) -> (f64) {
    %xi = memref.load %x[%i] : memref<5xf64>
    %xx = arith.mulf %xi, %xi : f64
    %ln = arith.addf %l, %xx : f64
    scf.yield %ln : f64
  }
  func.return %loss : f64
}
