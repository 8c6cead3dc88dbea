// RUN: tapeflow-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A cache cannot hold a cache.
%c = "test.op"() : () -> !tape.cache<!tape.cache<f64>>
// CHECK: tape.cache cannot hold another tape.cache

// -----

// The capacity hint cannot be negative.
%c = "tape.init"() <{capacity = -1 : index}> : () -> !tape.cache<f64>
// CHECK: capacity must be >= 0, got -1

// -----

// The pushed value must have the cache's element type.
%c = tape.init : !tape.cache<f64>
%v = "test.op"() : () -> i32
"tape.push"(%c, %v) : (!tape.cache<f64>, i32) -> ()
// CHECK: operand 'value' at position 1 does not verify: attribute f64 expected from variable 'T', but got i32

// -----

// The popped value has the cache's element type.
%c = tape.init : !tape.cache<f64>
%v = "tape.pop"(%c) : (!tape.cache<f64>) -> f32
// CHECK: result 'value' at position 0 does not verify: attribute f64 expected from variable 'T', but got f32

// -----

// tape.free takes a cache.
%v = "test.op"() : () -> f64
"tape.free"(%v) : (f64) -> ()
// CHECK: operand 'cache' at position 0 does not verify: f64 should be of base attribute tape.cache

// -----

// tape.init produces a cache.
%v = "tape.init"() : () -> f64
// CHECK: result 'cache' at position 0 does not verify: f64 should be of base attribute tape.cache
