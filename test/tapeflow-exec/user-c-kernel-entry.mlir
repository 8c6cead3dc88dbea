// tapeflow-exec takes tapeflow-run's command line for a user's C kernel: the gradient by
// its short name, the shadows zero and sized from their primals, the same numbers.
// REQUIRES: libclang, mlir-native
// RUN: rm -rf %t && mkdir %t
// RUN: python -c "import numpy as n; n.savez('%t/u.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16))"
// RUN: tapeflow-opt %S/../tapeflow-bench/user-c-kernel-scalars.c --tapeflow -o %t/rd-tf.mlir
// RUN: tapeflow-exec %t/rd-tf.mlir --entry rd_loss_grad --inputs %t/u.npz --args 16 4 0.01 0.1 1.0 | filecheck %s
// RUN: tapeflow-exec %t/rd-tf.mlir --inputs %t/u.npz -e rd_loss_grad --args 16 4 0.01 0.1 1.0 -p tapeflow-cleanup | filecheck %s

// CHECK:      arg[0]: memref<?xf64> = [0.0, 0.06665471057498844,
// arg[1] is the gradient: the C path's cse merges the four loads of u[i] into one, whose
// adjoint sums its uses before it is added to du[i] (as after LLVM's GVN): du[1] is
// ...6882, one ulp from the ...6883 of one shadow update per C occurrence.
// CHECK-NEXT: arg[1]: memref<?xf64> = [0.0005331297906796882, 0.13323713989926517,
