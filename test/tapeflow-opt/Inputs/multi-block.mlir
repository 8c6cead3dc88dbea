func.func @f(%a: f64) -> f64 attributes {tapeflow.autodiff} {
  %m = arith.mulf %a, %a : f64
  cf.br ^bb1(%m : f64)
^bb1(%b: f64):
  func.return %b : f64
}
