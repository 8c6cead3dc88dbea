// exit(code), _Exit(code) and abort() end the run: a cf.assert that always fails, located
// at the call, so the gradient stops there with one located runtime error in every
// executor (tapeflow-run, tapeflow-sim, tapeflow-exec), as a failed assert would; runs
// that do not reach it are unchanged.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f | filecheck %s
// RUN: tapeflow-cc %s --function f -o %t.mlir
// RUN: tapeflow-opt %t.mlir -p 'tapeflow-autodiff{functions=f}' -o %t-ad.mlir
// RUN: tapeflow-run %t-ad.mlir -e f_grad --args 3 1.0 | filecheck %s --check-prefix=OK
// RUN: not tapeflow-run %t-ad.mlir -e f_grad --args 5 1.0 2>&1 | filecheck %s --check-prefix=EXIT
// RUN: not tapeflow-run %t-ad.mlir -e f_grad --args -1 1.0 2>&1 | filecheck %s --check-prefix=ABORT
#include <stdlib.h>

double f(double x[4], int n) {
  double s = 0.0;
  for (int i = 0; i < 4; i++)
    s += x[i] * x[i];
  if (n > 4)
    exit(2);
  if (n < 0)
    abort();
  return s;
}

// CHECK:      %[[NEVER:.*]] = arith.constant false
// CHECK:      scf.if
// CHECK-NEXT:   cf.assert %[[NEVER]], "{{.*}}exit.c:19:5: exit(2) called: the run ends (no gradient)"
// CHECK:      scf.if
// CHECK-NEXT:   cf.assert %[[NEVER]], "{{.*}}exit.c:21:5: abort() called: the run ends (no gradient)"

// the shadow is 2x (the seeded fill of x, doubled):
// OK:        arg[0]: memref<4xf64> = [0.2739233746429086, -0.4604265724722594,
// OK-NEXT:   arg[1]: memref<4xf64> = [0.5478467492858172, -0.9208531449445188,
// EXIT:      error: {{.*}}exit.c:19:5: exit(2) called: the run ends (no gradient)
// EXIT-NOT:  Traceback
// ABORT:     error: {{.*}}exit.c:21:5: abort() called: the run ends (no gradient)
