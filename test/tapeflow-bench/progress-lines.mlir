// Off a terminal, a task of several runs (one kernel: its variants) prints a line as each
// run finishes, from the worker, before the task's own line: a full run's first task
// takes minutes.
// RUN: rm -rf %t && tapeflow-bench --quick --kernels gemm,softmax_ce --machine default-45nm --sweep none --no-plots -j 1 --out %t 2>&1 >/dev/null | filecheck %s
// RUN: tapeflow-bench --quick --kernels gemm,softmax_ce --machine default-45nm --sweep none --no-plots -j 1 --no-progress --out %t 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET
// CHECK-DAG: tapeflow-bench: gemm: Enzyme layout done ({{[0-9]+}} s into its task)
// CHECK-DAG: tapeflow-bench: gemm: regions only done
// CHECK-DAG: tapeflow-bench: gemm: TapeFlow done
// CHECK: tapeflow-bench: 1/2 tasks done
// QUIET-NOT: done
