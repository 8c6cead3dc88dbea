// tapeflow-bench --quick ends with a three-line verdict: where TapeFlow paid, where the
// cost model kept Enzyme's layout and how to see why (--remarks), and what the full run
// is for beside the paper's claims (results.md ends with it too).
// RUN: rm -rf %t && tapeflow-bench --quick --kernels gemm,mass_spring --machine accel-salam -j 1 --no-plots --no-progress --sweep none --out %t | filecheck %s
// RUN: filecheck %s < %t/results.md
// CHECK:      verdict: TapeFlow paid on accel-salam: {{nowhere|[a-z_]+ [0-9.]+x.*}}.
// CHECK-NEXT: verdict: the cost model kept Enzyme's layout (same cycles) on accel-salam: {{.*}}; `tapeflow-opt K.mlir -p 'tapeflow{machine=accel-salam}' --remarks` says why, per tape cache.
// CHECK-NEXT: verdict: at small sizes the tapes fit in the caches; the full run (`tapeflow-bench`, default sizes, every tape >= 4x the L2) is what README "Results beside the paper" sets beside the paper's claims (1.3-2.5x faster, 5-40x less on-chip SRAM, 8x less on-chip energy).
// CHECK-EMPTY:
