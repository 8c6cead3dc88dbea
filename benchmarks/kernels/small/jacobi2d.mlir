func.func @jacobi2d(%A: memref<5x5xf64>, %B: memref<5x5xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 5 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to 2 {
    affine.for %if = 1 to 4 {
      affine.for %jf = 1 to 4 {
        %v0f = affine.load %A[%if, %jf] : memref<5x5xf64>
        %v1f = affine.load %A[%if, %jf - 1] : memref<5x5xf64>
        %v2f = affine.load %A[%if, %jf + 1] : memref<5x5xf64>
        %v3f = affine.load %A[%if + 1, %jf] : memref<5x5xf64>
        %v4f = affine.load %A[%if - 1, %jf] : memref<5x5xf64>
        %a1f = arith.addf %v0f, %v1f : f64
        %a2f = arith.addf %a1f, %v2f : f64
        %a3f = arith.addf %a2f, %v3f : f64
        %a4f = arith.addf %a3f, %v4f : f64
        %rf = arith.mulf %fifth, %a4f : f64
        affine.store %rf, %B[%if, %jf] : memref<5x5xf64>
      }
    }
    affine.for %ib = 1 to 4 {
      affine.for %jb = 1 to 4 {
        %v0b = affine.load %B[%ib, %jb] : memref<5x5xf64>
        %v1b = affine.load %B[%ib, %jb - 1] : memref<5x5xf64>
        %v2b = affine.load %B[%ib, %jb + 1] : memref<5x5xf64>
        %v3b = affine.load %B[%ib + 1, %jb] : memref<5x5xf64>
        %v4b = affine.load %B[%ib - 1, %jb] : memref<5x5xf64>
        %a1b = arith.addf %v0b, %v1b : f64
        %a2b = arith.addf %a1b, %v2b : f64
        %a3b = arith.addf %a2b, %v3b : f64
        %a4b = arith.addf %a3b, %v4b : f64
        %rb = arith.mulf %fifth, %a4b : f64
        affine.store %rb, %A[%ib, %jb] : memref<5x5xf64>
      }
    }
  }
  %loss = scf.for %i = %c0 to %cN step %c1 iter_args(%la = %zero) -> (f64) {
    %lj = scf.for %j = %c0 to %cN step %c1 iter_args(%l = %la) -> (f64) {
      %a = memref.load %A[%i, %j] : memref<5x5xf64>
      %sq = arith.mulf %a, %a : f64
      %h = arith.mulf %half, %sq : f64
      %ln = arith.addf %l, %h : f64
      scf.yield %ln : f64
    }
    scf.yield %lj : f64
  }
  func.return %loss : f64
}
