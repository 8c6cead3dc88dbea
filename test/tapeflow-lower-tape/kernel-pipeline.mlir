// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/gemm.mlir -p tapeflow-autodiff,tapeflow-lower-tape | filecheck %s
// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/softmax_ce.mlir --tapeflow-autodiff --tapeflow-lower-tape | filecheck %s --check-prefix=SMCE

// The AD output of a real kernel lowers completely. gemm caches the accumulated (i, j)
// entry of AB (needed by the square in the loss) once per (i, j): one 3x4 f64 array.
// CHECK-LABEL: func.func @gemm_grad
// CHECK-NEXT:    %[[BUF:.*]] = memref.alloc() {tapeflow.tape} : memref<3x4xf64>
// CHECK:         } {tapeflow.loop = 2 : i64}
// CHECK-NEXT:    memref.store %acc, %[[BUF]][%i, %j] : memref<3x4xf64>
// CHECK:         memref.load %[[BUF]][%{{.*}}, %{{.*}}] : memref<3x4xf64>
// CHECK:         memref.dealloc %[[BUF]] : memref<3x4xf64>
// CHECK-NOT:     {{^ *(%[^ ]+ = )?tape\.}}

// softmax cross-entropy (4 rows of 5): the row maximum and the row sum once per row, and
// the comparison `z > max` once per step of the max loop (4 x 4 steps): one byte, where
// recomputing it would cache the 8-byte running maximum (min-tape's cost rule).
// SMCE-LABEL: func.func @softmax_ce_grad
// SMCE-DAG:     memref.alloc() {tapeflow.tape} : memref<4xf64>
// SMCE-DAG:     memref.alloc() {tapeflow.tape} : memref<4xf64>
// SMCE-DAG:     memref.alloc() {tapeflow.tape} : memref<4x4xi1>
// SMCE-NOT:     {{^ *(%[^ ]+ = )?tape\.}}
