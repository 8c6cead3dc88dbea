func.func @f(%m: memref<4x4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4x4xf64>
  func.return %v : f64
}
