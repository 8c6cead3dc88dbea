// A user's C kernel that needs `-I` (a header of its own) and `-D` (its size): tapeflow-bench
// takes both, as every tool that takes a `.c` file (issue 23), and they travel with the
// kernel to the workers that compile it. Without them it is Clang's located error.
// REQUIRES: libclang
// RUN: rm -rf %t && tapeflow-bench --kernels %s -I %S/Inputs/c-include -D N=8 --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t | filecheck %s
// RUN: not tapeflow-bench --kernels %s --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t 2>&1 | filecheck %s --check-prefix=MISSING
// CHECK: ## tapeflow-bench: kernel files, sizes and inputs as given, machine `default-45nm`
// CHECK: | decay | {{[0-9]+}} B | {{.*}} | bit-identical |
// CHECK-NOT: Traceback
// MISSING: error: {{.*}}user-c-kernel-preprocessor.c:12:10: 'gain.h' file not found
// MISSING-NOT: Traceback
#include "gain.h"

double decay(double x[N], double w[2]) {
  double s = 0.0;
  for (int i = 0; i < N; i++)
    s = GAIN * s * w[0] + w[1] * x[i] * x[i];
  return s;
}

void decay_enzyme(double *x, double *dx, double *w, double *dw) {
  __enzyme_autodiff((void *)decay, x, dx, w, dw);
}
