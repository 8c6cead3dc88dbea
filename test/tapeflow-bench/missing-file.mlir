// A kernel file that does not exist, and one with no function marked for
// differentiation: one `error:` line each, exit 1, nothing run.
// RUN: not tapeflow-bench --kernels %t.nosuch/k.c --out %t 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: error: no such file: {{.*}}.nosuch/k.c
// MISSING-NOT: Traceback
// RUN: not tapeflow-bench --kernels %s --out %t 2>&1 | filecheck %s --check-prefix=UNMARKED
// UNMARKED: error: {{.*}}missing-file.mlir: no function is marked for differentiation; mark exactly one
// UNMARKED-NOT: Traceback
// RUN: not tapeflow-bench --suite nosuch --out %t 2>&1 | filecheck %s --check-prefix=SUITE
// SUITE: error: --suite: unknown suite(s) 'nosuch'; known: bundled, salam
// RUN: not tapeflow-bench --quick --exclude nosuch --out %t 2>&1 | filecheck %s --check-prefix=EXCLUDE
// EXCLUDE: error: --exclude: no kernel 'nosuch' in this run
// RUN: not tapeflow-bench --quick --kernels gemm --exclude gemm --out %t 2>&1 | filecheck %s --check-prefix=NONE
// NONE: error: --exclude leaves no kernel to run

func.func @f(%x: memref<2xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<2xf64>
  func.return %a : f64
}
