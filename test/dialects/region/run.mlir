// Executing record tapes: a record comes back whole; reading a record never written is a
// diagnostic naming the op and its location, with no traceback.

// RUN: tapeflow-run %s --entry roundtrip --args 1.5 7 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-run %s --entry unwritten --args 4 | filecheck %s --check-prefix=UNWRITTEN --allow-empty
// RUN: not tapeflow-run %s --entry unwritten --args 4 2>&1 | filecheck %s --check-prefix=UNWRITTEN-ERR

func.func @roundtrip(%a: f64, %b: i32) -> (i32, f64) {
  %c3 = arith.constant 3 : index
  %t = region.alloc count = 4 : !region.tape<!region.record<f64, i32>>
  region.write %t[%c3], %a, %b : !region.tape<!region.record<f64, i32>>
  %x, %y = region.read %t[%c3] : !region.tape<!region.record<f64, i32>>
  region.dealloc %t : !region.tape<!region.record<f64, i32>>
  func.return %y, %x : i32, f64
}
// OUT: result[0]: i32 = 7
// OUT-NEXT: result[1]: f64 = 1.5

func.func @unwritten(%n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %t = region.alloc(%n) : !region.tape<!region.record<f64>>
  region.write %t[%c0], %one : !region.tape<!region.record<f64>>
  %x = region.read %t[%c1] : !region.tape<!region.record<f64>>
  func.return %x : f64
}
// UNWRITTEN-NOT: result
// UNWRITTEN-ERR: error: {{.*}}run.mlir:25:3: 'region.read' record 1 of tape #{{[0-9]+}} read before it was written
// UNWRITTEN-ERR-NOT: Traceback
