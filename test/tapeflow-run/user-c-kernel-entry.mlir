// A user's C kernel through tapeflow-opt: its gradient is named after its activity
// signature (@rd_loss_ddcccc_grad); `--entry rd_loss_grad` takes it, as it is the only
// one, and a misspelt entry gets a did-you-mean. tapeflow-run and tapeflow-sim build the
// arguments by the one rule (the same --inputs and --args; shadows zero, sized from
// their primals), so they take the same command line.
// REQUIRES: libclang
// RUN: rm -rf %t && mkdir %t
// RUN: python -c "import numpy as n; n.savez('%t/u.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16))"
// RUN: tapeflow-opt %S/../tapeflow-bench/user-c-kernel-scalars.c --tapeflow -o %t/rd-tf.mlir
// RUN: tapeflow-run %t/rd-tf.mlir --entry rd_loss_grad --inputs %t/u.npz --args 16 4 0.01 0.1 1.0 | filecheck %s
// RUN: tapeflow-run %t/rd-tf.mlir --entry rd_loss_ddcccc_grad --inputs %t/u.npz --args 16 4 0.01 0.1 1.0 | filecheck %s
// RUN: tapeflow-sim %t/rd-tf.mlir --entry rd_loss_grad --inputs %t/u.npz --args 16 4 0.01 0.1 1.0 | filecheck %s --check-prefix=SIM
// RUN: not tapeflow-run %t/rd-tf.mlir --entry rd_los_ddcccc_grad --args 1 2>&1 | filecheck %s --check-prefix=TYPO
// RUN: not tapeflow-sim %t/rd-tf.mlir --entry rd_loss_ddccc_grad --args 1 2>&1 | filecheck %s --check-prefix=TYPO
// The primal of a .c file has no gradient yet: tapeflow-opt makes it.
// RUN: not tapeflow-run %S/../tapeflow-bench/user-c-kernel-scalars.c --entry rd_loss_grad 2>&1 | filecheck %s --check-prefix=OPT

// CHECK:      arg[0]: memref<?xf64> = [0.0, 0.06665471057498844,
// arg[1] is the gradient: the C path's cse merges the four loads of u[i] into one, whose
// adjoint sums its uses before it is added to du[i] (as after LLVM's GVN): du[1] is
// ...6882, one ulp from the ...6883 of one shadow update per C occurrence.
// CHECK-NEXT: arg[1]: memref<?xf64> = [0.0005331297906796882, 0.13323713989926517,
// SIM: cycles:
// TYPO: error: no function @{{rd_los_ddcccc_grad|rd_loss_ddccc_grad}} in the module (it defines @rd_loss, @rd_loss_ddcccc, @rd_loss_ddcccc_grad); did you mean @rd_loss_ddcccc_grad
// TYPO-NOT: Traceback
// OPT: error: no function @rd_loss_grad in the module (it defines @rd_loss, @rd_loss_ddcccc); @rd_loss_grad is made by tapeflow-opt
