// RUN: tapeflow-run %s --entry f --args 0.5 --json | filecheck %s

// --json: results and the memref arguments after the run, floats at full precision,
// non-finite values as strings.
func.func @f(%v: memref<2xf32>, %x: f64) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %s = math.sin %x : f64
  %zero = arith.constant 0.0 : f64
  %nan = arith.divf %zero, %zero : f64
  %one = arith.constant 1.5 : f32
  memref.store %one, %v[%c0] : memref<2xf32>
  func.return %s, %nan : f64, f64
}
// CHECK: {"function": "f", "results": [{"index": 0, "type": "f64", "value": 0.479425538604203}, {"index": 1, "type": "f64", "value": "nan"}], "arguments": [{"index": 0, "type": "memref<2xf32>", "shape": [2], "value": [1.5, {{-?[0-9.e-]+}}]}]}
