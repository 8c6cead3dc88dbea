func.func @f_grad(%x: memref<10xf64>, %dx: memref<10xf64>, %s: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %cst0 = arith.constant 0.0 : f64
  %t0 = tape.init : !tape.cache<f64>
  %t1 = tape.init : !tape.cache<f32>
  %t2 = tape.init : !tape.cache<i1>
  %t3 = tape.init : !tape.cache<index>
  %t4 = tape.init : !tape.cache<f64>
  %sq = arith.mulf %s, %s : f64
  tape.push %t4, %sq : !tape.cache<f64>
  scf.for %i = %c0 to %c10 step %c1 {
    %v = memref.load %x[%i] : memref<10xf64>
    %y = arith.mulf %v, %sq : f64
    tape.push %t0, %y : !tape.cache<f64>
    %yf = arith.truncf %y : f64 to f32
    tape.push %t1, %yf : !tape.cache<f32>
    %b = arith.cmpf ogt, %y, %cst0 : f64
    tape.push %t2, %b : !tape.cache<i1>
    %j = arith.addi %i, %c1 : index
    tape.push %t3, %j : !tape.cache<index>
    memref.store %y, %x[%i] : memref<10xf64>
  } {tapeflow.loop = 0 : i64}
  %acc0 = arith.constant 0.0 : f64
  %r = scf.for %k = %c0 to %c10 step %c1 iter_args(%acc = %acc0) -> (f64) {
    %j = tape.pop %t3 : !tape.cache<index>
    %b = tape.pop %t2 : !tape.cache<i1>
    %yf = tape.pop %t1 : !tape.cache<f32>
    %y = tape.pop %t0 : !tape.cache<f64>
    %yd = arith.extf %yf : f32 to f64
    %z = arith.addf %y, %yd : f64
    %zz = arith.select %b, %z, %y : f64
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f64
    %w = arith.mulf %zz, %jf : f64
    %a = arith.addf %acc, %w : f64
    scf.yield %a : f64
  } {tapeflow.loop = 0 : i64}
  %sq2 = tape.pop %t4 : !tape.cache<f64>
  %res = arith.mulf %r, %sq2 : f64
  tape.free %t0 : !tape.cache<f64>
  tape.free %t1 : !tape.cache<f32>
  tape.free %t2 : !tape.cache<i1>
  tape.free %t3 : !tape.cache<index>
  tape.free %t4 : !tape.cache<f64>
  func.return %res : f64
}
