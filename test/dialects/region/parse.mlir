// RUN: tapeflow-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// The custom syntax of region.write needs one value per field.
%t = region.alloc count = 4 : !region.tape<!region.record<f64, i1>>
%i, %a = "test.op"() : () -> (index, f64)
region.write %t[%i], %a : !region.tape<!region.record<f64, i1>>
// CHECK: region.write expects 2 value(s) for !region.record<f64, i1>, got 1

// -----

// The type after the colon is the tape's.
%i, %m = "test.op"() : () -> (index, memref<4xf64>)
%a = region.read %m[%i] : memref<4xf64>
// CHECK: expected a !region.tape type, got memref<4xf64>

// -----

// Operand types come from the record: a mismatch is caught while parsing.
%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
%i, %a = "test.op"() : () -> (index, f32)
region.write %t[%i], %a : !region.tape<!region.record<f64>>
// CHECK: operand is used with type f64, but has been previously used or defined with type f32
