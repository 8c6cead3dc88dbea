// The runtime checks of a module that came from C name the C line: tapeflow-exec on the
// C file with -p tapeflow, n = 32 over 16-element arrays.
// REQUIRES: libclang, mlir-native
// RUN: rm -rf %t && mkdir %t
// RUN: python -c "import numpy as n; n.savez('%t/u.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16))"
// RUN: not tapeflow-exec %S/../tapeflow-bench/user-c-kernel-scalars.c -p tapeflow -e rd_loss_grad --inputs %t/u.npz --args 32 4 0.01 0.1 1.0 2>&1 | filecheck %s
// CHECK: error: {{.*}}user-c-kernel-scalars.c:{{[0-9]+}}:{{[0-9]+}}: 'memref.load' out-of-bounds access (runtime verification)
// CHECK-NOT: Traceback
