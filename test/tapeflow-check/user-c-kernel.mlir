// A user's C kernel's gradient against central finite differences, from the C file:
// the marked function, its scalars by --args and arrays by --inputs as tapeflow-run
// takes them; exit 1 when an element disagrees beyond --tolerance.
// REQUIRES: libclang
// RUN: rm -rf %t && mkdir %t
// RUN: python -c "import numpy as n; n.savez('%t/u.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16))"
// RUN: tapeflow-check %S/../tapeflow-bench/user-c-kernel-scalars.c --inputs %t/u.npz --args 16 4 0.01 0.1 | filecheck %s
// RUN: not tapeflow-check %S/../tapeflow-bench/user-c-kernel-scalars.c --inputs %t/u.npz --args 16 4 0.01 0.1 --tolerance 0 | filecheck %s --check-prefix=STRICT
// RUN: not tapeflow-check %S/../tapeflow-bench/user-c-kernel-scalars.c --inputs %t/u.npz 2>&1 | filecheck %s --check-prefix=ARGS
// CHECK: u[5]: AD 0.65493523{{[0-9]+}}  FD 0.65493523{{[0-9]+}}  error {{[0-9.]+}}e-{{[0-9]+}}
// CHECK: ok: @rd_loss_ddcccc, 8 element(s) of 2 array(s), largest error {{.*}} (tolerance 1e-05)
// STRICT: FAILED: @rd_loss_ddcccc
// ARGS: error: @rd_loss_ddcccc takes 4 scalar argument(s) (index, index, f64, f64), got 0
// ARGS-NOT: Traceback
