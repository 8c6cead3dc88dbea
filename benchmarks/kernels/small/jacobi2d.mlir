func.func @jacobi2d(%A: memref<5x5xf64>, %B: memref<5x5xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cN = arith.constant 5 : index
  %cN1 = arith.constant 4 : index
  %cT = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %fifth = arith.constant 0.2 : f64
  scf.for %t = %c0 to %cT step %c1 {
    scf.for %if = %c1 to %cN1 step %c1 {
      %imf = arith.subi %if, %c1 : index
      %ipf = arith.addi %if, %c1 : index
      scf.for %jf = %c1 to %cN1 step %c1 {
        %jmf = arith.subi %jf, %c1 : index
        %jpf = arith.addi %jf, %c1 : index
        %v0f = memref.load %A[%if, %jf] : memref<5x5xf64>
        %v1f = memref.load %A[%if, %jmf] : memref<5x5xf64>
        %v2f = memref.load %A[%if, %jpf] : memref<5x5xf64>
        %v3f = memref.load %A[%ipf, %jf] : memref<5x5xf64>
        %v4f = memref.load %A[%imf, %jf] : memref<5x5xf64>
        %a1f = arith.addf %v0f, %v1f : f64
        %a2f = arith.addf %a1f, %v2f : f64
        %a3f = arith.addf %a2f, %v3f : f64
        %a4f = arith.addf %a3f, %v4f : f64
        %rf = arith.mulf %fifth, %a4f : f64
        memref.store %rf, %B[%if, %jf] : memref<5x5xf64>
        scf.yield
      }
      scf.yield
    }
    scf.for %ib = %c1 to %cN1 step %c1 {
      %imb = arith.subi %ib, %c1 : index
      %ipb = arith.addi %ib, %c1 : index
      scf.for %jb = %c1 to %cN1 step %c1 {
        %jmb = arith.subi %jb, %c1 : index
        %jpb = arith.addi %jb, %c1 : index
        %v0b = memref.load %B[%ib, %jb] : memref<5x5xf64>
        %v1b = memref.load %B[%ib, %jmb] : memref<5x5xf64>
        %v2b = memref.load %B[%ib, %jpb] : memref<5x5xf64>
        %v3b = memref.load %B[%ipb, %jb] : memref<5x5xf64>
        %v4b = memref.load %B[%imb, %jb] : memref<5x5xf64>
        %a1b = arith.addf %v0b, %v1b : f64
        %a2b = arith.addf %a1b, %v2b : f64
        %a3b = arith.addf %a2b, %v3b : f64
        %a4b = arith.addf %a3b, %v4b : f64
        %rb = arith.mulf %fifth, %a4b : f64
        memref.store %rb, %A[%ib, %jb] : memref<5x5xf64>
        scf.yield
      }
      scf.yield
    }
    scf.yield
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
