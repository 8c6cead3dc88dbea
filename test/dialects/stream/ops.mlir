// RUN: TAPEFLOW_ROUNDTRIP --match-full-lines
// RUN: TAPEFLOW_GENERIC_ROUNDTRIP --match-full-lines

// Every stream op, type and attribute, custom syntax and generic syntax.

%n, %t = "test.op"() : () -> (index, index)
%buf = region.alloc count = 8 : !region.tape<!region.record<f64, i1>, #stream.spm>
%f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64, i1>, 8>
%g = stream.fifo_alloc tiles = 4 : !stream.fifo<!region.record<f64, i1>, 8>
stream.acquire_write %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
%w = stream.commit %buf -> %f[%t] : !stream.fifo<!region.record<f64, i1>, 8>
stream.acquire_write %buf, %w : !region.tape<!region.record<f64, i1>, #stream.spm>
%w2 = stream.commit %buf -> %g[%t] {tapeflow.loop = 2 : i64} : !stream.fifo<!region.record<f64, i1>, 8>
stream.wait %w2
%r = stream.prefetch %f[%t] -> %buf : !stream.fifo<!region.record<f64, i1>, 8>
stream.acquire_read %buf, %r : !region.tape<!region.record<f64, i1>, #stream.spm>
stream.release %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
%r2 = stream.prefetch %g[%t] -> %buf {tapeflow.loop = 2 : i64} : !stream.fifo<!region.record<f64, i1>, 8>
stream.acquire_read %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
stream.release %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
stream.fifo_dealloc %f : !stream.fifo<!region.record<f64, i1>, 8>
%m, %tok = "test.op"() : () -> (memref<64xf64, #stream.spm>, !stream.token)

// CHECK:      builtin.module {
// CHECK-NEXT:   %n, %t = "test.op"() : () -> (index, index)
// CHECK-NEXT:   %buf = region.alloc count = 8 : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   %f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   %g = stream.fifo_alloc tiles = 4 : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   stream.acquire_write %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   %w = stream.commit %buf -> %f[%t] : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   stream.acquire_write %buf, %w : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   %w2 = stream.commit %buf -> %g[%t] {tapeflow.loop = 2 : i64} : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   stream.wait %w2
// CHECK-NEXT:   %r = stream.prefetch %f[%t] -> %buf : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   stream.acquire_read %buf, %r : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   stream.release %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   %r2 = stream.prefetch %g[%t] -> %buf {tapeflow.loop = 2 : i64} : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   stream.acquire_read %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   stream.release %buf : !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-NEXT:   stream.fifo_dealloc %f : !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-NEXT:   %m, %tok = "test.op"() : () -> (memref<64xf64, #stream.spm>, !stream.token)
// CHECK-NEXT: }

// CHECK-GENERIC:      "builtin.module"() ({
// CHECK-GENERIC-NEXT:   %n, %t = "test.op"() : () -> (index, index)
// CHECK-GENERIC-NEXT:   %buf = "region.alloc"() <{count = 8 : index}> : () -> !region.tape<!region.record<f64, i1>, #stream.spm>
// CHECK-GENERIC-NEXT:   %f = "stream.fifo_alloc"(%n) : (index) -> !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-GENERIC-NEXT:   %g = "stream.fifo_alloc"() <{num_tiles = 4 : index}> : () -> !stream.fifo<!region.record<f64, i1>, 8>
// CHECK-GENERIC-NEXT:   "stream.acquire_write"(%buf) : (!region.tape<!region.record<f64, i1>, #stream.spm>) -> ()
// CHECK-GENERIC-NEXT:   %w = "stream.commit"(%f, %t, %buf) : (!stream.fifo<!region.record<f64, i1>, 8>, index, !region.tape<!region.record<f64, i1>, #stream.spm>) -> !stream.token
// CHECK-GENERIC-NEXT:   "stream.acquire_write"(%buf, %w) : (!region.tape<!region.record<f64, i1>, #stream.spm>, !stream.token) -> ()
// CHECK-GENERIC-NEXT:   %w2 = "stream.commit"(%g, %t, %buf) {tapeflow.loop = 2 : i64} : (!stream.fifo<!region.record<f64, i1>, 8>, index, !region.tape<!region.record<f64, i1>, #stream.spm>) -> !stream.token
// CHECK-GENERIC-NEXT:   "stream.wait"(%w2) : (!stream.token) -> ()
// CHECK-GENERIC-NEXT:   %r = "stream.prefetch"(%f, %t, %buf) : (!stream.fifo<!region.record<f64, i1>, 8>, index, !region.tape<!region.record<f64, i1>, #stream.spm>) -> !stream.token
// CHECK-GENERIC-NEXT:   "stream.acquire_read"(%buf, %r) : (!region.tape<!region.record<f64, i1>, #stream.spm>, !stream.token) -> ()
// CHECK-GENERIC-NEXT:   "stream.release"(%buf) : (!region.tape<!region.record<f64, i1>, #stream.spm>) -> ()
// CHECK-GENERIC-NEXT:   %r2 = "stream.prefetch"(%g, %t, %buf) {tapeflow.loop = 2 : i64} : (!stream.fifo<!region.record<f64, i1>, 8>, index, !region.tape<!region.record<f64, i1>, #stream.spm>) -> !stream.token
// CHECK-GENERIC-NEXT:   "stream.acquire_read"(%buf) : (!region.tape<!region.record<f64, i1>, #stream.spm>) -> ()
// CHECK-GENERIC-NEXT:   "stream.release"(%buf) : (!region.tape<!region.record<f64, i1>, #stream.spm>) -> ()
// CHECK-GENERIC-NEXT:   "stream.fifo_dealloc"(%f) : (!stream.fifo<!region.record<f64, i1>, 8>) -> ()
// CHECK-GENERIC-NEXT:   %m, %tok = "test.op"() : () -> (memref<64xf64, #stream.spm>, !stream.token)
// CHECK-GENERIC-NEXT: }) : () -> ()
