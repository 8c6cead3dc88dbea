// A --quick report: the cycle terms in a unit that shows them (thousands, not 0.000
// millions), the small-size caveat under the table, and off a terminal one progress
// line per finished task instead of a redrawn bar.
// Without Dask distributed (the sweep extra, hidden by Inputs/no-dask) the default is
// one in-process worker, and --jobs 2 is one error line, not a traceback.
// RUN: rm -rf %t && env PYTHONPATH=%S/Inputs/no-dask tapeflow-bench --quick --kernels gemm --machine default-45nm --sweep none --no-plots --out %t 2>%t.err | filecheck %s
// RUN: filecheck %s --input-file %t.err --check-prefix=PROGRESS
// CHECK: 1 worker(s)
// CHECK: | **geomean** (1 kernels) |
// CHECK: At small sizes the tapes fit in the caches: these ratios say little about TapeFlow
// CHECK: ### Cycle terms (hwmodel/timing/phases.py: T_core = sum over phases of max(T_OL, T_nOL + T_L2 + T_DRAM) + T_exposed + T_late; {{.*}}, cycles
// CHECK: | kernel | variant | T_OL | T_nOL | T_L2 | T_DRAM | T_exposed | T_late | T_core |
// CHECK: | gemm | Enzyme layout | {{[1-9][0-9,]*\.[0-9]+}} |
// PROGRESS-NOT: run/s
// PROGRESS: tapeflow-bench: 1/3 tasks done (gemm: {{[0-9]+}} simulation run(s), {{[0-9]+}} s)
// PROGRESS: tapeflow-bench: 3/3 tasks done
// PROGRESS-NOT: run/s
// RUN: env PYTHONPATH=%S/Inputs/no-dask not tapeflow-bench --quick --kernels %s --jobs 2 --no-plots --out %t/nodask2 2>&1 | filecheck %s --check-prefix=JOBS
// JOBS: error: more than one worker needs Dask distributed
// JOBS-NOT: Traceback

func.func @tiny(%x: memref<3xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %one) -> (f64) {
    %a = memref.load %x[%i] : memref<3xf64>
    %p = arith.mulf %s, %a : f64
    %t = math.sin %p : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
