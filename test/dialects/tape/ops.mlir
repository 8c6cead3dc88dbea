// RUN: TAPEFLOW_ROUNDTRIP --match-full-lines
// RUN: TAPEFLOW_GENERIC_ROUNDTRIP --match-full-lines

// Every tape op and type, custom syntax and generic syntax.

%x, %i = "test.op"() : () -> (f64, i32)
%c = tape.init : !tape.cache<f64>
%d = tape.init capacity = 16 : !tape.cache<i32>
tape.push %c, %x : !tape.cache<f64>
tape.push %d, %i : !tape.cache<i32>
%y = tape.pop %c : !tape.cache<f64>
%j = tape.pop %d : !tape.cache<i32>
tape.free %c : !tape.cache<f64>
tape.free %d : !tape.cache<i32>
%m = tape.init : !tape.cache<memref<4xf64>>

// CHECK:      builtin.module {
// CHECK-NEXT:   %x, %i = "test.op"() : () -> (f64, i32)
// CHECK-NEXT:   %c = tape.init : !tape.cache<f64>
// CHECK-NEXT:   %d = tape.init capacity = 16 : !tape.cache<i32>
// CHECK-NEXT:   tape.push %c, %x : !tape.cache<f64>
// CHECK-NEXT:   tape.push %d, %i : !tape.cache<i32>
// CHECK-NEXT:   %y = tape.pop %c : !tape.cache<f64>
// CHECK-NEXT:   %j = tape.pop %d : !tape.cache<i32>
// CHECK-NEXT:   tape.free %c : !tape.cache<f64>
// CHECK-NEXT:   tape.free %d : !tape.cache<i32>
// CHECK-NEXT:   %m = tape.init : !tape.cache<memref<4xf64>>
// CHECK-NEXT: }

// CHECK-GENERIC:      "builtin.module"() ({
// CHECK-GENERIC-NEXT:   %x, %i = "test.op"() : () -> (f64, i32)
// CHECK-GENERIC-NEXT:   %c = "tape.init"() : () -> !tape.cache<f64>
// CHECK-GENERIC-NEXT:   %d = "tape.init"() <{capacity = 16 : index}> : () -> !tape.cache<i32>
// CHECK-GENERIC-NEXT:   "tape.push"(%c, %x) : (!tape.cache<f64>, f64) -> ()
// CHECK-GENERIC-NEXT:   "tape.push"(%d, %i) : (!tape.cache<i32>, i32) -> ()
// CHECK-GENERIC-NEXT:   %y = "tape.pop"(%c) : (!tape.cache<f64>) -> f64
// CHECK-GENERIC-NEXT:   %j = "tape.pop"(%d) : (!tape.cache<i32>) -> i32
// CHECK-GENERIC-NEXT:   "tape.free"(%c) : (!tape.cache<f64>) -> ()
// CHECK-GENERIC-NEXT:   "tape.free"(%d) : (!tape.cache<i32>) -> ()
// CHECK-GENERIC-NEXT:   %m = "tape.init"() : () -> !tape.cache<memref<4xf64>>
// CHECK-GENERIC-NEXT: }) : () -> ()
