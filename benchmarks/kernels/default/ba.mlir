func.func @ba(%cams: memref<16x6xf64>, %pts: memref<4096x3xf64>, %obs: memref<65536x2xf64>, %cam_idx: memref<65536xi32>, %pt_idx: memref<65536xi32>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %cNO = arith.constant 65536 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %loss = scf.for %o = %c0 to %cNO step %c1 iter_args(%l = %zero) -> (f64) {
    %ci32 = memref.load %cam_idx[%o] : memref<65536xi32>
    %pi32 = memref.load %pt_idx[%o] : memref<65536xi32>
    %c = arith.index_cast %ci32 : i32 to index
    %p = arith.index_cast %pi32 : i32 to index
    %th = memref.load %cams[%c, %c0] : memref<16x6xf64>
    %tx = memref.load %cams[%c, %c1] : memref<16x6xf64>
    %ty = memref.load %cams[%c, %c2] : memref<16x6xf64>
    %tz = memref.load %cams[%c, %c3] : memref<16x6xf64>
    %f = memref.load %cams[%c, %c4] : memref<16x6xf64>
    %k1 = memref.load %cams[%c, %c5] : memref<16x6xf64>
    %X = memref.load %pts[%p, %c0] : memref<4096x3xf64>
    %Y = memref.load %pts[%p, %c1] : memref<4096x3xf64>
    %Z = memref.load %pts[%p, %c2] : memref<4096x3xf64>
    %cs = math.cos %th : f64
    %sn = math.sin %th : f64
    %cx = arith.mulf %cs, %X : f64
    %sy = arith.mulf %sn, %Y : f64
    %sx = arith.mulf %sn, %X : f64
    %cy = arith.mulf %cs, %Y : f64
    %xr0 = arith.subf %cx, %sy : f64
    %xr = arith.addf %xr0, %tx : f64
    %yr0 = arith.addf %sx, %cy : f64
    %yr = arith.addf %yr0, %ty : f64
    %zr = arith.addf %Z, %tz : f64
    %u = arith.divf %xr, %zr : f64
    %v = arith.divf %yr, %zr : f64
    %uu = arith.mulf %u, %u : f64
    %vv = arith.mulf %v, %v : f64
    %r2 = arith.addf %uu, %vv : f64
    %kr = arith.mulf %k1, %r2 : f64
    %d = arith.addf %one, %kr : f64
    %fd = arith.mulf %f, %d : f64
    %pu = arith.mulf %fd, %u : f64
    %pv = arith.mulf %fd, %v : f64
    %mu = memref.load %obs[%o, %c0] : memref<65536x2xf64>
    %mv = memref.load %obs[%o, %c1] : memref<65536x2xf64>
    %ru = arith.subf %pu, %mu : f64
    %rv = arith.subf %pv, %mv : f64
    %ru2 = arith.mulf %ru, %ru : f64
    %rv2 = arith.mulf %rv, %rv : f64
    %r = arith.addf %ru2, %rv2 : f64
    %ln = arith.addf %l, %r : f64
    scf.yield %ln : f64
  }
  func.return %loss : f64
}
