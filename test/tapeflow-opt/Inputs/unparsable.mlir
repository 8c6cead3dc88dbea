func.func @f() {
  %0 = arith.constant 1.0 : f64
  %x = arith.bogus %0 : f64
  func.return
}
