// Input for errors.mlir: the operand of math.sin is used with the wrong type.

func.func @f(%x: f64) -> f64 {
  %r = math.sin %x : f32
  func.return %r : f64
}
