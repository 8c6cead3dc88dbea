// A misspelt machine key gets the closest known key, in every tool that takes --set or
// a machine file.
// RUN: not tapeflow-sim %s --entry f --args 1.0 --set l2.sise=1024 2>&1 | filecheck %s
// RUN: not tapeflow-sim %s --entry f --args 1.0 --set ops.fp_add.cycle=3 2>&1 | filecheck %s --check-prefix=OPS
// RUN: not tapeflow-bench --quick --kernels gemm --set l2.sise=1024 --out %t 2>&1 | filecheck %s
// CHECK: error: unknown machine key 'l2.sise' (did you mean 'l2.size'?)
// CHECK-NOT: Traceback
// OPS: error: unknown machine key 'ops.fp_add.cycle' (did you mean 'ops.fp_add.cycles'?)

func.func @f(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  func.return %y : f64
}
