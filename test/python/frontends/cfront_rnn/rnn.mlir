// The MLIR twin of rnn.c, written by hand: the same loops, h indexed directly.
func.func @rnn(%W: memref<?xf64>, %U: memref<?xf64>, %x: memref<?xf64>, %h: memref<?xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant 4 : index
  %cH = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  scf.for %t = %c0 to %cT step %c1 {
    %prev = arith.muli %t, %cH : index
    %t1 = arith.addi %t, %c1 : index
    %next = arith.muli %t1, %cH : index
    scf.for %i = %c0 to %cH step %c1 {
      %u = memref.load %U[%i] : memref<?xf64>
      %xt = memref.load %x[%t] : memref<?xf64>
      %z0 = arith.mulf %u, %xt : f64
      %z = scf.for %j = %c0 to %cH step %c1 iter_args(%acc = %z0) -> (f64) {
        %row = arith.muli %i, %cH : index
        %wij = arith.addi %row, %j : index
        %w = memref.load %W[%wij] : memref<?xf64>
        %pj = arith.addi %prev, %j : index
        %hp = memref.load %h[%pj] : memref<?xf64>
        %p = arith.mulf %w, %hp : f64
        %s = arith.addf %acc, %p : f64
        scf.yield %s : f64
      }
      %hn = math.tanh %z : f64
      %ni = arith.addi %next, %i : index
      memref.store %hn, %h[%ni] : memref<?xf64>
    }
  }
  %last = arith.muli %cT, %cH : index
  %loss = scf.for %i = %c0 to %cH step %c1 iter_args(%l = %zero) -> (f64) {
    %k = arith.addi %last, %i : index
    %v = memref.load %h[%k] : memref<?xf64>
    %v2 = arith.mulf %v, %v : f64
    %ln = arith.addf %l, %v2 : f64
    scf.yield %ln : f64
  }
  func.return %loss : f64
}
