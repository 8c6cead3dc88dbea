"""IR shared by the hardware-model tests (test_hwmodel, test_hwmodel_machine); the stream
kernel, which benchmarks/sim_speed.py runs too, is `tapeflow.example_ir.stream_kernel`."""

DMA = """
func.func @dma(%x: f64) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant {k} : index
  %w0 = arith.constant {work} : index
  %buf = region.alloc count = {k} : !region.tape<!region.record<f64>, #stream.spm>
  %f = stream.fifo_alloc tiles = 1 : !stream.fifo<!region.record<f64>, {k}>
  stream.acquire_write %buf : !region.tape<!region.record<f64>, #stream.spm>
  scf.for %i = %c0 to %k step %c1 {{
    region.write %buf[%i], %x : !region.tape<!region.record<f64>, #stream.spm>
  }}
  %w = stream.commit %buf -> %f[%c0] : !stream.fifo<!region.record<f64>, {k}>
  %y = scf.for %j = %c0 to %w0 step %c1 iter_args(%acc = %x) -> (f64) {{
    %a = arith.mulf %acc, %x : f64
    scf.yield %a : f64
  }}
  stream.wait %w
  %r = stream.prefetch %f[%c0] -> %buf : !stream.fifo<!region.record<f64>, {k}>
  stream.acquire_read %buf, %r : !region.tape<!region.record<f64>, #stream.spm>
  %v = region.read %buf[%c1] : !region.tape<!region.record<f64>, #stream.spm>
  stream.release %buf : !region.tape<!region.record<f64>, #stream.spm>
  stream.fifo_dealloc %f : !stream.fifo<!region.record<f64>, {k}>
  region.dealloc %buf : !region.tape<!region.record<f64>, #stream.spm>
  %out = arith.addf %v, %y : f64
  func.return %out : f64
}}
"""
"""One tile of `{k}` f64 records committed by DMA and prefetched back, with `{work}`
iterations of core work between the commit and its wait (`DMA.format(k=..., work=...)`)."""
