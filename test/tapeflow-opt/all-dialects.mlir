// One function using the tape, region and stream dialects together round-trips through
// the custom and the generic syntax unchanged.

// RUN: tapeflow-opt %s > %t.custom.mlir
// RUN: tapeflow-opt %s --print-op-generic | tapeflow-opt > %t.generic.mlir
// RUN: diff %t.custom.mlir %t.generic.mlir
// RUN: tapeflow-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: filecheck %s < %t.custom.mlir

// CHECK:      %c = tape.init : !tape.cache<i1>
// CHECK:      %t = region.alloc(%n) : !region.tape<!region.record<f64, index, i1>>
// CHECK:      %buf = region.alloc count = 4 : !region.tape<!region.record<f64, index, i1>, #stream.spm>
// CHECK:      %tok = stream.commit %buf -> %f[%i] : !stream.fifo<!region.record<f64, index, i1>, 4>

func.func @all(%n: index, %x: f64, %b: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c = tape.init : !tape.cache<i1>
  tape.push %c, %b : !tape.cache<i1>
  %t = region.alloc(%n) : !region.tape<!region.record<f64, index, i1>>
  %buf = region.alloc count = 4 : !region.tape<!region.record<f64, index, i1>, #stream.spm>
  %f = stream.fifo_alloc(%n) : !stream.fifo<!region.record<f64, index, i1>, 4>
  scf.for %i = %c0 to %n step %c1 {
    region.write %t[%i], %x, %i, %b : !region.tape<!region.record<f64, index, i1>>
    stream.acquire_write %buf : !region.tape<!region.record<f64, index, i1>, #stream.spm>
    region.write %buf[%c0], %x, %i, %b : !region.tape<!region.record<f64, index, i1>, #stream.spm>
    %tok = stream.commit %buf -> %f[%i] : !stream.fifo<!region.record<f64, index, i1>, 4>
    stream.wait %tok
  }
  %y, %j, %bb = region.read %t[%c0] : !region.tape<!region.record<f64, index, i1>>
  %b2 = tape.pop %c : !tape.cache<i1>
  tape.free %c : !tape.cache<i1>
  stream.fifo_dealloc %f : !stream.fifo<!region.record<f64, index, i1>, 4>
  region.dealloc %buf : !region.tape<!region.record<f64, index, i1>, #stream.spm>
  region.dealloc %t : !region.tape<!region.record<f64, index, i1>>
  func.return %y : f64
}
