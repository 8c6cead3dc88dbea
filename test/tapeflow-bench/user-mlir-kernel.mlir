// A user's own MLIR kernel: its function marked `tapeflow.autodiff`, three ways, arrays
// by the seeded rule; --inputs (tapeflow-run's forms) is read and checked before anything
// runs: a wrong shape is one line.
// RUN: rm -rf %t && mkdir -p %t && tapeflow-bench --kernels %s --machine accel-salam -j 1 --no-plots --no-progress --sweep none --out %t/a | filecheck %s
// CHECK: ## tapeflow-bench: kernel files, sizes and inputs as given, machine `accel-salam`
// CHECK: | sq_chain | {{[0-9]+}} B | {{.*}} | bit-identical |
// accel-salam times its datapath by dependence levels: its cycle terms have a T_datapath
// column, and the heading its formula
// CHECK: ### Cycle terms (hwmodel/timing/phases.py: T_core = sum over phases of max(T_datapath, T_L2, T_DRAM) + T_late;
// CHECK: | kernel | variant | T_OL | T_nOL | T_L2 | T_DRAM | T_datapath | T_exposed | T_late | T_core |
// RUN: python -c "import numpy as np; np.save('%t/bad.npy', np.zeros(3))"
// RUN: not tapeflow-bench --kernels %s --inputs 0=%t/bad.npy --machine accel-salam -j 1 --no-plots --no-progress --out %t/c 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: error: argument 0 (memref<6xf64>) given an array of shape [3]
// SHAPE-NOT: Traceback

func.func @sq_chain(%x: memref<6xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %one = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %c6 step %c1 iter_args(%s = %one) -> (f64) {
    %a = memref.load %x[%i] : memref<6xf64>
    %p = arith.mulf %s, %a : f64
    %t = math.sin %p : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}
