// RUN: tapeflow-opt %s -p 'tapeflow{spm-bytes=64 depth=2 policy=cache-all mode=always}' | filecheck %s
// RUN: tapeflow-opt %s '--tapeflow=spm-bytes=64 policy=cache-all mode=always' | filecheck %s --check-prefix=SPELL
// RUN: tapeflow-opt --help | filecheck %s --check-prefix=HELP
// RUN: not tapeflow-opt %s -p 'tapeflow{spm-bytes=0}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not tapeflow-opt %s -p 'tapeflow{spm-bytes=8 policy=cache-all mode=always}' 2>&1 | filecheck %s --check-prefix=SMALL

// The whole pipeline on a primal kernel: autodiff, regions, layers, stream.

func.func @sq(%x: memref<10xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<10xf64>
    %t = math.tanh %v : f64
    %s = arith.mulf %t, %t : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: func.func @sq_grad
// CHECK-NOT:     tape.
// CHECK:         stream.fifo_alloc
// CHECK:         stream.acquire_write
// CHECK:         region.write {{.*}}#stream.spm>
// CHECK:         stream.commit
// CHECK:         stream.prefetch
// CHECK:         stream.acquire_read
// CHECK:         region.read {{.*}}#stream.spm>
// CHECK:         stream.release
// CHECK:         stream.fifo_dealloc
// CHECK-NOT:     tape.

// SPELL-LABEL: func.func @sq_grad
// SPELL:         stream.commit

// HELP: tapeflow                           Reverse-mode AD with a streamed record tape: autodiff, regions, layers, stream (cleanup=true: then tapeflow-cleanup).
// HELP:                                      cleanup=false  (bool)
// HELP-NEXT:                                  machine=  (str)
// HELP-NEXT:                                  set=()  (tuple[str, ...])
// HELP-NEXT:                                  mode=auto  (str)
// HELP: tapeflow-cleanup                   Cleanup before simulation, the same for every variant: xDSL's canonicalize (folds divsi x,1 / muli x,1 / addi 0,x), cse, licm (hoists loop-invariant index arithmetic), cse.
// HELP: tapeflow-layers                    Strip-mines each region's forward and reverse loops into scratchpad-sized layers.
// HELP: tapeflow-lower-regions             Keeps region tapes as contiguous DRAM record buffers; lowers leftover caches.
// HELP: tapeflow-regions                   Packs the values each region instance pushes into one record of a region tape.
// HELP: tapeflow-stream                    Turns layer tiles into a DRAM FIFO of tiles fed and drained by prefetching DMA.

// BAD: error: pass-pipeline:1:{{[0-9]+}}: tapeflow: option spm-bytes must be >= 1, got 0
// BAD-NOT: Traceback

// SMALL: error: {{.*}}scratchpad of 8 bytes is too small for @sq_grad
// SMALL-NOT: Traceback
