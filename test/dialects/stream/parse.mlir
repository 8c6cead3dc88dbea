// RUN: tapeflow-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// The custom syntax of a DMA names the FIFO's type.
%i = "test.op"() : () -> index
%b = region.alloc count = 4 : !region.tape<!region.record<f64>, #stream.spm>
%w = stream.commit %b -> %b[%i] : !region.tape<!region.record<f64>, #stream.spm>
// CHECK: expected a !stream.fifo type, got !region.tape<!region.record<f64>, #stream.spm>

// -----

// The buffer's type follows from the FIFO's: a DRAM tape does not fit.
%n, %i = "test.op"() : () -> (index, index)
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64>, 4>
%t = region.alloc count = 4 : !region.tape<!region.record<f64>>
%r = stream.prefetch %f[%i] -> %t : !stream.fifo<!region.record<f64>, 4>
// CHECK: operand is used with type !region.tape<!region.record<f64>, #stream.spm>, but has been previously used or defined with type !region.tape<!region.record<f64>>

// -----

// The tile size is an integer.
%f = "test.op"() : () -> !stream.fifo<!region.record<f64>, f64>
// CHECK: Expected integer literal
