// RUN: tapeflow-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A tile holds at least one record.
%f = "test.op"() : () -> !stream.fifo<!region.record<f64>, 0>
// CHECK: stream.fifo tile size must be >= 1 record, got 0

// -----

// A FIFO holds tiles of records.
%f = "test.op"() : () -> !stream.fifo<f64, 4>
// CHECK: f64 should be of base attribute region.record

// -----

// The number of tiles is either an operand or a property, not both...
%n = "test.op"() : () -> index
%f = "stream.fifo_alloc"(%n) <{num_tiles = 2 : index}> : (index) -> !stream.fifo<!region.record<f64>, 4>
// CHECK: expected exactly one of a tile count operand or a tiles property

// -----

// ... and not neither.
%f = "stream.fifo_alloc"() : () -> !stream.fifo<!region.record<f64>, 4>
// CHECK: expected exactly one of a tile count operand or a tiles property

// -----

// A static number of tiles is positive.
%f = stream.fifo_alloc tiles = 0 : !stream.fifo<!region.record<f64>, 4>
// CHECK: tiles must be >= 1, got 0

// -----

// Only scratchpad buffers are acquired: a DRAM tape is not one.
%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
stream.acquire_write %t : !region.tape<!region.record<f64>>
// CHECK: expected a scratchpad buffer !region.tape<R, #stream.spm>, got !region.tape<!region.record<f64>>

// -----

%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
stream.acquire_read %t : !region.tape<!region.record<f64>>
// CHECK: expected a scratchpad buffer !region.tape<R, #stream.spm>, got !region.tape<!region.record<f64>>

// -----

%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
stream.release %t : !region.tape<!region.record<f64>>
// CHECK: expected a scratchpad buffer !region.tape<R, #stream.spm>, got !region.tape<!region.record<f64>>

// -----

// An acquire waits for a token, nothing else.
%b = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
%x = "test.op"() : () -> index
"stream.acquire_read"(%b, %x) : (!region.tape<!region.record<f64>, #stream.spm>, index) -> ()
// CHECK: operand 'token' at position 1 does not verify:

// -----

// A commit copies a scratchpad buffer, not a DRAM tape.
%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
%w = "stream.commit"(%f, %i, %t) : (!stream.fifo<!region.record<f64>, 4>, index, !region.tape<!region.record<f64>>) -> !stream.token
// CHECK: expected a scratchpad buffer !region.tape<R, #stream.spm>, got !region.tape<!region.record<f64>>

// -----

// The buffer's record is the FIFO's record.
%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%b = region.alloc count = 4 : !region.tape<!region.record<f32>, #stream.spm>
%w = "stream.commit"(%f, %i, %b) : (!stream.fifo<!region.record<f64>, 4>, index, !region.tape<!region.record<f32>, #stream.spm>) -> !stream.token
// CHECK: buffer record !region.record<f32> does not match the FIFO's record !region.record<f64>

// -----

%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%b = region.alloc count = 4 : !region.tape<!region.record<f64, i1>, #stream.spm>
%r = "stream.prefetch"(%f, %i, %b) : (!stream.fifo<!region.record<f64>, 4>, index, !region.tape<!region.record<f64, i1>, #stream.spm>) -> !stream.token
// CHECK: buffer record !region.record<f64, i1> does not match the FIFO's record !region.record<f64>

// -----

// A buffer of a statically known size holds exactly one tile (K records).
%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%b = region.alloc count = 8 : !region.tape<!region.record<f64>, #stream.spm>
stream.acquire_write %b : !region.tape<!region.record<f64>, #stream.spm>
%w = stream.commit %b -> %f[%i] : !stream.fifo<!region.record<f64>, 4>
// CHECK: buffer holds 8 records but a tile of the FIFO has 4

// -----

%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%b = region.alloc count = 2 : !region.tape<!region.record<f64>, #stream.spm>
%r = stream.prefetch %f[%i] -> %b : !stream.fifo<!region.record<f64>, 4>
// CHECK: buffer holds 2 records but a tile of the FIFO has 4

// -----

// A DMA returns a token.
%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%b = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
%r = "stream.prefetch"(%f, %i, %b) : (!stream.fifo<!region.record<f64>, 4>, index, !region.tape<!region.record<f64>, #stream.spm>) -> index
// CHECK: result 'token' at position 0 does not verify:

// -----

// The tile index is an index.
%n, %i = "test.op"() : () -> (index, i64)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%b = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
%r = "stream.prefetch"(%f, %i, %b) : (!stream.fifo<!region.record<f64>, 4>, i64, !region.tape<!region.record<f64>, #stream.spm>) -> !stream.token
// CHECK: operand 'tile' at position 1 does not verify:

// -----

// stream.wait takes a token.
%x = "test.op"() : () -> index
"stream.wait"(%x) : (index) -> ()
// CHECK: operand 'token' at position 0 does not verify:

// -----

// stream.fifo_dealloc takes a FIFO.
%b = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
"stream.fifo_dealloc"(%b) : (!region.tape<!region.record<f64>, #stream.spm>) -> ()
// CHECK: operand 'fifo' at position 0 does not verify:
