func.func @lstm(%X: memref<144x128x4xf64>, %W: memref<32x4xf64>, %U: memref<32x8xf64>, %bias: memref<32xf64>, %Hs: memref<145x128x8xf64>, %Cs: memref<145x128x8xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant 144 : index
  %cB = arith.constant 128 : index
  %cI = arith.constant 4 : index
  %cH = arith.constant 8 : index
  %cH2 = arith.constant 16 : index
  %cH3 = arith.constant 24 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %one = arith.constant 1.0 : f64
  %loss = scf.for %t = %c0 to %cT step %c1 iter_args(%lt = %zero) -> (f64) {
    %t1 = arith.addi %t, %c1 : index
    %lbo = scf.for %b = %c0 to %cB step %c1 iter_args(%lb = %lt) -> (f64) {
      %lj = scf.for %j = %c0 to %cH step %c1 iter_args(%l = %lb) -> (f64) {
        %r1 = arith.addi %j, %cH : index
        %r2 = arith.addi %j, %cH2 : index
        %r3 = arith.addi %j, %cH3 : index
        %b0 = memref.load %bias[%j] : memref<32xf64>
        %b1 = memref.load %bias[%r1] : memref<32xf64>
        %b2 = memref.load %bias[%r2] : memref<32xf64>
        %b3 = memref.load %bias[%r3] : memref<32xf64>
        %x0, %x1, %x2, %x3 = scf.for %i = %c0 to %cI step %c1 iter_args(%s0 = %b0, %s1 = %b1, %s2 = %b2, %s3 = %b3) -> (f64, f64, f64, f64) {
          %x = memref.load %X[%t, %b, %i] : memref<144x128x4xf64>
          %w0 = memref.load %W[%j, %i] : memref<32x4xf64>
          %w1 = memref.load %W[%r1, %i] : memref<32x4xf64>
          %w2 = memref.load %W[%r2, %i] : memref<32x4xf64>
          %w3 = memref.load %W[%r3, %i] : memref<32x4xf64>
          %p0 = arith.mulf %w0, %x : f64
          %p1 = arith.mulf %w1, %x : f64
          %p2 = arith.mulf %w2, %x : f64
          %p3 = arith.mulf %w3, %x : f64
          %n0 = arith.addf %s0, %p0 : f64
          %n1 = arith.addf %s1, %p1 : f64
          %n2 = arith.addf %s2, %p2 : f64
          %n3 = arith.addf %s3, %p3 : f64
          scf.yield %n0, %n1, %n2, %n3 : f64, f64, f64, f64
        }
        %z0, %z1, %z2, %z3 = scf.for %m = %c0 to %cH step %c1 iter_args(%s0 = %x0, %s1 = %x1, %s2 = %x2, %s3 = %x3) -> (f64, f64, f64, f64) {
          %hp = memref.load %Hs[%t, %b, %m] : memref<145x128x8xf64>
          %u0 = memref.load %U[%j, %m] : memref<32x8xf64>
          %u1 = memref.load %U[%r1, %m] : memref<32x8xf64>
          %u2 = memref.load %U[%r2, %m] : memref<32x8xf64>
          %u3 = memref.load %U[%r3, %m] : memref<32x8xf64>
          %p0 = arith.mulf %u0, %hp : f64
          %p1 = arith.mulf %u1, %hp : f64
          %p2 = arith.mulf %u2, %hp : f64
          %p3 = arith.mulf %u3, %hp : f64
          %n0 = arith.addf %s0, %p0 : f64
          %n1 = arith.addf %s1, %p1 : f64
          %n2 = arith.addf %s2, %p2 : f64
          %n3 = arith.addf %s3, %p3 : f64
          scf.yield %n0, %n1, %n2, %n3 : f64, f64, f64, f64
        }
        %ig_n = arith.negf %z0 : f64
        %ig_e = math.exp %ig_n : f64
        %ig_d = arith.addf %one, %ig_e : f64
        %ig = arith.divf %one, %ig_d : f64
        %fg_n = arith.negf %z1 : f64
        %fg_e = math.exp %fg_n : f64
        %fg_d = arith.addf %one, %fg_e : f64
        %fg = arith.divf %one, %fg_d : f64
        %og_n = arith.negf %z2 : f64
        %og_e = math.exp %og_n : f64
        %og_d = arith.addf %one, %og_e : f64
        %og = arith.divf %one, %og_d : f64
        %g = math.tanh %z3 : f64
        %cp = memref.load %Cs[%t, %b, %j] : memref<145x128x8xf64>
        %fc = arith.mulf %fg, %cp : f64
        %igg = arith.mulf %ig, %g : f64
        %c = arith.addf %fc, %igg : f64
        memref.store %c, %Cs[%t1, %b, %j] : memref<145x128x8xf64>
        %tc = math.tanh %c : f64
        %h = arith.mulf %og, %tc : f64
        memref.store %h, %Hs[%t1, %b, %j] : memref<145x128x8xf64>
        %hh = arith.mulf %h, %h : f64
        %hh2 = arith.mulf %half, %hh : f64
        %ln = arith.addf %l, %hh2 : f64
        scf.yield %ln : f64
      }
      scf.yield %lj : f64
    }
    scf.yield %lbo : f64
  }
  func.return %loss : f64
}
