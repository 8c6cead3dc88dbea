// RUN: tapeflow-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A record has at least one field.
%t = "test.op"() : () -> !region.record<>
// CHECK: region.record must have at least one field

// -----

// Record fields are scalars: integer, index or float.
%t = "test.op"() : () -> !region.record<f64, memref<4xf64>>
// CHECK: record fields must be integer, index or float types, got memref<4xf64>

// -----

// A tape lives in DRAM (no memory space) or in the scratchpad.
%t = "test.op"() : () -> !region.tape<!region.record<f64>, 1 : i64>
// CHECK: region.tape memory space must be absent (DRAM) or #stream.spm, got 1 : i64

// -----

// The count is either an operand or a property, not both.
%n = "test.op"() : () -> index
%t = "region.alloc"(%n) <{count = 4 : index}> : (index) -> !region.tape<!region.record<f64>>
// CHECK: expected exactly one of a count operand or a count property

// -----

// ... and not neither.
%t = "region.alloc"() : () -> !region.tape<!region.record<f64>>
// CHECK: expected exactly one of a count operand or a count property

// -----

// A static count is positive.
%t = region.alloc count = 0 : !region.tape<!region.record<f64>>
// CHECK: count must be >= 1, got 0

// -----

// region.alloc produces a tape.
%t = "region.alloc"() <{count = 4 : index}> : () -> memref<4xf64>
// CHECK: result 'tape' at position 0 does not verify:

// -----

// The values written are the record's fields, in order.
%t = region.alloc count = 4 : !region.tape<!region.record<f64, i1>>
%i, %a, %b = "test.op"() : () -> (index, i1, f64)
"region.write"(%t, %i, %a, %b) : (!region.tape<!region.record<f64, i1>>, index, i1, f64) -> ()
// CHECK: value types (i1, f64) do not match the record fields (f64, i1)

// -----

// A record is written whole.
%t = region.alloc count = 4 : !region.tape<!region.record<f64, i1>>
%i, %a = "test.op"() : () -> (index, f64)
"region.write"(%t, %i, %a) : (!region.tape<!region.record<f64, i1>>, index, f64) -> ()
// CHECK: value types (f64) do not match the record fields (f64, i1)

// -----

// The results of a read are the record's fields.
%t = region.alloc count = 4 : !region.tape<!region.record<f64, i1>>
%i = "test.op"() : () -> index
%a, %b, %c = "region.read"(%t, %i) : (!region.tape<!region.record<f64, i1>>, index) -> (f64, i1, f64)
// CHECK: result types (f64, i1, f64) do not match the record fields (f64, i1)

// -----

// The index is an index.
%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
%i = "test.op"() : () -> i32
%a = "region.read"(%t, %i) : (!region.tape<!region.record<f64>>, i32) -> f64
// CHECK: operand 'index' at position 1 does not verify:

// -----

// Only tapes are deallocated by region.dealloc.
%m = "test.op"() : () -> memref<4xf64>
"region.dealloc"(%m) : (memref<4xf64>) -> ()
// CHECK: operand 'tape' at position 0 does not verify:

// -----

// Only a DRAM tape grows: a scratchpad buffer has its tile's size.
%t = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
%n = "test.op"() : () -> index
region.reserve %t, %n : !region.tape<!region.record<f64>, #stream.spm>
// CHECK: region.reserve grows a DRAM tape, not a scratchpad buffer
