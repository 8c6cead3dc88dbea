// RUN: tapeflow-opt %s -p 'tapeflow{machine=default-45nm policy=cache-all}' | filecheck %s --check-prefix=CPU
// RUN: tapeflow-opt %s -p 'tapeflow{machine=accel-salam policy=cache-all}' | filecheck %s --check-prefix=ACCEL
// RUN: tapeflow-opt %s -p 'tapeflow{machine="%S/Inputs/no-prefetch.toml" policy=cache-all}' | filecheck %s --check-prefix=NOPF
// RUN: tapeflow-opt %s -p 'tapeflow{machine=default-45nm set=prefetch.enabled=false policy=cache-all}' | filecheck %s --check-prefix=NOPF
// RUN: tapeflow-opt %s -p 'tapeflow{set="prefetch.enabled=false" policy=cache-all}' | filecheck %s --check-prefix=NOPF
// RUN: tapeflow-opt %s -p 'tapeflow{mode=always policy=cache-all}' | filecheck %s --check-prefix=ALWAYS
// RUN: tapeflow-opt %s -p 'tapeflow{machine=native policy=cache-all}' | filecheck %s --check-prefix=NATIVE
// RUN: not tapeflow-opt %s -p 'tapeflow{mode=sometimes}' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: not tapeflow-opt %s -p 'tapeflow{machine=no-such-machine}' 2>&1 | filecheck %s --check-prefix=MACHINE
// RUN: not tapeflow-opt %s -p 'tapeflow{machine=accel-salam set=l2.size=4096,l2.bogus=1}' 2>&1 | filecheck %s --check-prefix=SET

// The cost model's decisions (docs/CONTRACTS.md, "The cost model of mode=auto") on three
// tapes: 128 B (@small: fits every L1 share), 8 MiB (@big: beyond every L2 share) and a
// trip count known only at run time (@dyn). Streamed functions get stream ops; kept ones
// get exactly the Enzyme layout (memref tape buffers, no region or tape op left).
// - default-45nm: its stride prefetcher hides a sequential tape's misses (one per 4 KiB
//   page) for less than streaming's DMA fences cost: nothing is streamed; @dyn's cache
//   keeps Enzyme's layout, an array sized at the loop's entry.
// - accel-salam: 1 KiB L1, no prefetcher: @big and @dyn are streamed, @small is not.
// - the default machine without its prefetcher (a machine file, or `set=` overrides, as
//   `tapeflow-bench --set` passes them on): @big and @dyn are
//   streamed (a 16 KiB tile's misses, 2 x 256 lines x 160 / 10 = 8192 cycles, now exceed
//   its DMA issue and fences, 514 cycles): the rule reads the machine's keys.
// - mode=always: all three streamed (the pipeline before the cost model).
// - machine=native (tapeflow-exec: a CPU without a DMA engine): nothing streamed.

func.func @small(%x: memref<16xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<16xf64>
    %t = math.tanh %v : f64
    %s = arith.mulf %t, %t : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}

func.func @big(%x: memref<1048576xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant 1048576 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %cn step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<1048576xf64>
    %t = math.tanh %v : f64
    %s = arith.mulf %t, %t : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}

func.func @dyn(%x: memref<?xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %t = math.tanh %v : f64
    %s = arith.mulf %t, %t : f64
    %a2 = arith.addf %a, %s : f64
    scf.yield %a2 : f64
  }
  func.return %r : f64
}

// CPU-LABEL: func.func @small_grad
// CPU-NOT:     stream.
// CPU:         memref.alloc() {tapeflow.tape} : memref<16xf64>
// CPU-LABEL: func.func @big_grad
// CPU-NOT:     stream.
// CPU:         memref.alloc() {tapeflow.tape} : memref<1048576xf64>
// CPU-LABEL: func.func @dyn_grad
// CPU-NOT:     stream.
// CPU:         memref.alloc(%{{.*}}) {tapeflow.tape} : memref<?xf64>
// CPU-NOT:     stream.
// CPU-NOT:     tape.

// ACCEL-LABEL: func.func @small_grad
// ACCEL-NOT:     stream.
// ACCEL:         memref.alloc() {tapeflow.tape} : memref<16xf64>
// ACCEL-LABEL: func.func @big_grad
// ACCEL:         stream.commit
// ACCEL:         stream.prefetch
// ACCEL-LABEL: func.func @dyn_grad
// ACCEL:         stream.commit
// ACCEL:         stream.prefetch

// NOPF-LABEL: func.func @small_grad
// NOPF-NOT:     stream.
// NOPF-LABEL: func.func @big_grad
// NOPF:         stream.commit
// NOPF-LABEL: func.func @dyn_grad
// NOPF:         stream.commit

// ALWAYS-LABEL: func.func @small_grad
// ALWAYS:         stream.commit
// ALWAYS-LABEL: func.func @big_grad
// ALWAYS:         stream.commit
// ALWAYS-LABEL: func.func @dyn_grad
// ALWAYS:         stream.commit

// NATIVE-NOT: stream.

// MODE: error: {{.*}}option mode must be one of auto, always, got 'sometimes'
// MODE-NOT: Traceback

// MACHINE: error: {{.*}}machine 'no-such-machine'
// MACHINE-NOT: Traceback
// SET: error: pass-pipeline:1:30: option 'set' of tapeflow: unknown machine key 'l2.bogus' (in 'l2.size=4096,l2.bogus=1')
// SET-NOT: Traceback
