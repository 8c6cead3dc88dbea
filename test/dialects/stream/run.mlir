// Executing the stream protocol: values come back exactly, and a misuse is a diagnostic
// naming the op and its location, with no traceback.

// RUN: tapeflow-run %s --entry roundtrip --args 1.5 2.5 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-run %s --entry wait_twice --args 1.0 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not tapeflow-run %s --entry early_read --args 1.0 2>&1 | filecheck %s --check-prefix=EARLY

func.func @roundtrip(%a: f64, %b: f64) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = region.alloc count = 2 : !region.tape<!region.record<f64>, #stream.spm>
  %f = stream.fifo_alloc tiles = 1 : !stream.fifo<!region.record<f64>, 2>
  stream.acquire_write %buf : !region.tape<!region.record<f64>, #stream.spm>
  region.write %buf[%c0], %a : !region.tape<!region.record<f64>, #stream.spm>
  region.write %buf[%c1], %b : !region.tape<!region.record<f64>, #stream.spm>
  %w = stream.commit %buf -> %f[%c0] : !stream.fifo<!region.record<f64>, 2>
  stream.wait %w
  %r = stream.prefetch %f[%c0] -> %buf : !stream.fifo<!region.record<f64>, 2>
  stream.acquire_read %buf, %r : !region.tape<!region.record<f64>, #stream.spm>
  %x = region.read %buf[%c1] : !region.tape<!region.record<f64>, #stream.spm>
  %y = region.read %buf[%c0] : !region.tape<!region.record<f64>, #stream.spm>
  stream.release %buf : !region.tape<!region.record<f64>, #stream.spm>
  stream.fifo_dealloc %f : !stream.fifo<!region.record<f64>, 2>
  region.dealloc %buf : !region.tape<!region.record<f64>, #stream.spm>
  func.return %x, %y : f64, f64
}
// OUT: result[0]: f64 = 2.5
// OUT-NEXT: result[1]: f64 = 1.5

func.func @wait_twice(%a: f64) {
  %c0 = arith.constant 0 : index
  %buf = region.alloc count = 1 : !region.tape<!region.record<f64>, #stream.spm>
  %f = stream.fifo_alloc tiles = 1 : !stream.fifo<!region.record<f64>, 1>
  stream.acquire_write %buf : !region.tape<!region.record<f64>, #stream.spm>
  region.write %buf[%c0], %a : !region.tape<!region.record<f64>, #stream.spm>
  %w = stream.commit %buf -> %f[%c0] : !stream.fifo<!region.record<f64>, 1>
  stream.wait %w
  stream.wait %w
  func.return
}
// TWICE: error: {{.*}}run.mlir:38:3: 'stream.wait' commit token #{{[0-9]+}} (tile 0) waited for twice
// TWICE-NOT: Traceback

func.func @early_read(%a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %buf = region.alloc count = 1 : !region.tape<!region.record<f64>, #stream.spm>
  %f = stream.fifo_alloc tiles = 1 : !stream.fifo<!region.record<f64>, 1>
  stream.acquire_write %buf : !region.tape<!region.record<f64>, #stream.spm>
  region.write %buf[%c0], %a : !region.tape<!region.record<f64>, #stream.spm>
  %w = stream.commit %buf -> %f[%c0] : !stream.fifo<!region.record<f64>, 1>
  stream.wait %w
  %r = stream.prefetch %f[%c0] -> %buf : !stream.fifo<!region.record<f64>, 1>
  %x = region.read %buf[%c0] : !region.tape<!region.record<f64>, #stream.spm>
  func.return %x : f64
}
// EARLY: error: {{.*}}run.mlir:53:3: 'region.read' scratchpad buffer #{{[0-9]+}} accessed while a prefetch DMA on it is in flight (acquire it first)
// EARLY-NOT: Traceback
