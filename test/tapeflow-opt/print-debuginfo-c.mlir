// tapeflow-opt --mlir-print-debuginfo (mlir-opt's spelling of --print-debuginfo) keeps a
// C file's locations in the printed IR, so tapeflow-run's and tapeflow-exec's runtime
// errors on that file name the C line, not the line of the printed IR.
// REQUIRES: libclang
// RUN: rm -rf %t && mkdir %t
// RUN: tapeflow-opt %S/../tapeflow-bench/user-c-kernel-scalars.c --tapeflow --mlir-print-debuginfo -o %t/rd-tf.mlir
// RUN: filecheck %s --check-prefix=IR < %t/rd-tf.mlir
// RUN: python -c "import numpy as n; n.savez('%t/u.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16))"
// RUN: not tapeflow-run %t/rd-tf.mlir -e rd_loss_grad --inputs %t/u.npz --args 32 4 0.01 0.1 1.0 2>&1 | filecheck %s
// IR: memref.load {{.*}} loc("{{.*}}user-c-kernel-scalars.c":{{[0-9]+}}:{{[0-9]+}})
// CHECK: error: {{.*}}user-c-kernel-scalars.c:27:{{[0-9]+}}: 'memref.load' index [16] out of bounds
