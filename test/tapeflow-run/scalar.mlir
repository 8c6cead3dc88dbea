// RUN: tapeflow-run %s --entry f --args 0.5 | filecheck %s
// RUN: tapeflow-run %s --entry g --args 0.5 | filecheck %s --check-prefix=F32
// RUN: tapeflow-run %s --entry h --args -3 7 | filecheck %s --check-prefix=INT

// A scalar kernel: the result prints at full precision, as Python's repr of the float
// (math.sin(0.5) == 0.479425538604203).
func.func @f(%x: f64) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}
// CHECK: result[0]: f64 = 0.479425538604203
// CHECK-NOT: arg[

// f32 arithmetic is f32: sin(0.5f) rounded to float32, then 0.1f added in float32.
func.func @g(%x: f32) -> f32 {
  %s = math.sin %x : f32
  %c = arith.constant 0.1 : f32
  %r = arith.addf %s, %c : f32
  func.return %r : f32
}
// F32: result[0]: f32 = 0.579425573348999

// Integer arguments and results, several results.
func.func @h(%a: i32, %b: index) -> (i32, index, i1) {
  %c = arith.constant 5 : i32
  %m = arith.muli %a, %c : i32
  %q = arith.ceildivsi %b, %b : index
  %t = arith.cmpi slt, %a, %c : i32
  func.return %m, %q, %t : i32, index, i1
}
// INT:      result[0]: i32 = -15
// INT-NEXT: result[1]: index = 1
// INT-NEXT: result[2]: i1 = true
