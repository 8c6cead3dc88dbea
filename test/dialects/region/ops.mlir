// RUN: TAPEFLOW_ROUNDTRIP --match-full-lines
// RUN: TAPEFLOW_GENERIC_ROUNDTRIP --match-full-lines

// Every region op and type, custom syntax and generic syntax.

%n, %i, %a, %b, %c, %d, %e = "test.op"() : () -> (index, index, f64, f64, i1, f32, index)
%t = region.alloc(%n) : !region.tape<!region.record<f64, f64, i1>>
%s = region.alloc count = 64 : !region.tape<!region.record<f32, index>, #stream.spm>
region.write %t[%i], %a, %b, %c : !region.tape<!region.record<f64, f64, i1>>
region.write %s[%i], %d, %e {tapeflow.loop = 1 : i64} : !region.tape<!region.record<f32, index>, #stream.spm>
%x, %y, %z = region.read %t[%i] : !region.tape<!region.record<f64, f64, i1>>
%u, %v = region.read %s[%i] {tapeflow.loop = 1 : i64} : !region.tape<!region.record<f32, index>, #stream.spm>
region.dealloc %t : !region.tape<!region.record<f64, f64, i1>>
region.dealloc %s : !region.tape<!region.record<f32, index>, #stream.spm>
%one = "test.op"() : () -> !region.tape<!region.record<i8>>

// CHECK:      builtin.module {
// CHECK-NEXT:   %n, %i, %a, %b, %c, %d, %e = "test.op"() : () -> (index, index, f64, f64, i1, f32, index)
// CHECK-NEXT:   %t = region.alloc(%n) : !region.tape<!region.record<f64, f64, i1>>
// CHECK-NEXT:   %s = region.alloc count = 64 : !region.tape<!region.record<f32, index>, #stream.spm>
// CHECK-NEXT:   region.write %t[%i], %a, %b, %c : !region.tape<!region.record<f64, f64, i1>>
// CHECK-NEXT:   region.write %s[%i], %d, %e {tapeflow.loop = 1 : i64} : !region.tape<!region.record<f32, index>, #stream.spm>
// CHECK-NEXT:   %x, %y, %z = region.read %t[%i] : !region.tape<!region.record<f64, f64, i1>>
// CHECK-NEXT:   %u, %v = region.read %s[%i] {tapeflow.loop = 1 : i64} : !region.tape<!region.record<f32, index>, #stream.spm>
// CHECK-NEXT:   region.dealloc %t : !region.tape<!region.record<f64, f64, i1>>
// CHECK-NEXT:   region.dealloc %s : !region.tape<!region.record<f32, index>, #stream.spm>
// CHECK-NEXT:   %one = "test.op"() : () -> !region.tape<!region.record<i8>>
// CHECK-NEXT: }

// CHECK-GENERIC:      "builtin.module"() ({
// CHECK-GENERIC-NEXT:   %n, %i, %a, %b, %c, %d, %e = "test.op"() : () -> (index, index, f64, f64, i1, f32, index)
// CHECK-GENERIC-NEXT:   %t = "region.alloc"(%n) : (index) -> !region.tape<!region.record<f64, f64, i1>>
// CHECK-GENERIC-NEXT:   %s = "region.alloc"() <{count = 64 : index}> : () -> !region.tape<!region.record<f32, index>, #stream.spm>
// CHECK-GENERIC-NEXT:   "region.write"(%t, %i, %a, %b, %c) : (!region.tape<!region.record<f64, f64, i1>>, index, f64, f64, i1) -> ()
// CHECK-GENERIC-NEXT:   "region.write"(%s, %i, %d, %e) {tapeflow.loop = 1 : i64} : (!region.tape<!region.record<f32, index>, #stream.spm>, index, f32, index) -> ()
// CHECK-GENERIC-NEXT:   %x, %y, %z = "region.read"(%t, %i) : (!region.tape<!region.record<f64, f64, i1>>, index) -> (f64, f64, i1)
// CHECK-GENERIC-NEXT:   %u, %v = "region.read"(%s, %i) {tapeflow.loop = 1 : i64} : (!region.tape<!region.record<f32, index>, #stream.spm>, index) -> (f32, index)
// CHECK-GENERIC-NEXT:   "region.dealloc"(%t) : (!region.tape<!region.record<f64, f64, i1>>) -> ()
// CHECK-GENERIC-NEXT:   "region.dealloc"(%s) : (!region.tape<!region.record<f32, index>, #stream.spm>) -> ()
// CHECK-GENERIC-NEXT:   %one = "test.op"() : () -> !region.tape<!region.record<i8>>
// CHECK-GENERIC-NEXT: }) : () -> ()
