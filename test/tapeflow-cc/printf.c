// printf (and fprintf, puts, putchar, fflush) in translated code, as Enzyme users leave
// it in the function they differentiate: dropped, with one remark per call site, since
// output changes no result; the arguments are not evaluated (`stderr` is not a global
// that the subset refuses).
// REQUIRES: libclang
// RUN: tapeflow-cc %s 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: tapeflow-cc %s 2>/dev/null | filecheck %s
// The remarks are printed once the file compiles: a file refused after a printf gives its
// one error line only (before, the remark came first):
// RUN: not tapeflow-cc %S/Inputs/printf-refused.c 2>&1 | filecheck %s --check-prefix=REFUSED
#include <stdio.h>

double f(double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s += x[i] * x[i];
    printf("i=%d s=%f\n", i, s);
  }
  fprintf(stderr, "done\n");
  return s;
}

// REMARK: remark: {{.*}}printf.c:17:5: printf in translated code is dropped (it has no derivative)
// REMARK: remark: {{.*}}printf.c:19:3: fprintf in translated code is dropped (it has no derivative)
// CHECK:     func.func @f(
// CHECK-NOT: func.call
// CHECK:     func.return
// REFUSED-NOT: remark
// REFUSED:     error: {{.*}}printf-refused.c:5:10: unsupported C: call to 'helper'
// REFUSED-NOT: remark
