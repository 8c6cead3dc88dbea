// A user's kernel with runtime scalars (Enzyme's C style: an explicit-Euler
// reaction-diffusion step loop, runtime n and T): the bench takes them with --args, in
// order, or by name in the --inputs .npz, and labels the table as the user's file.
// REQUIRES: libclang
// RUN: rm -rf %t && mkdir %t
// RUN: python -c "import numpy as n; n.savez('%t/u.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16))"
// RUN: python -c "import numpy as n; n.savez('%t/all.npz', u=n.linspace(0, 1, 16), tmp=n.zeros(16), n=16, T=4, dt=0.01, k=0.1)"
// RUN: tapeflow-bench --kernels %s --inputs %t/u.npz --args 16 4 0.01 0.1 --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t/a | filecheck %s
// RUN: tapeflow-bench --kernels %s --inputs %t/all.npz --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t/b | filecheck %s
// RUN: not tapeflow-bench --kernels %s --inputs %t/u.npz --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t/c 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not tapeflow-bench --kernels gemm --args 3 --quick --out %t/d 2>&1 | filecheck %s --check-prefix=SUITE
// RUN: tapeflow-bench --help | filecheck %s --check-prefix=HELP
// CHECK: ## tapeflow-bench: kernel files, sizes and inputs as given, machine `default-45nm`
// CHECK: | rd_loss_ddcccc | {{[0-9.,]+ (B|KiB)}} | {{.*}} | bit-identical |
// CHECK-NOT: the default sizes
// ERR: error: {{.*}}.c: @rd_loss_ddcccc takes 4 scalar argument(s) (index, index, f64, f64), got 0; give them with --args, in order, or by name in the --inputs .npz
// ERR-NOT: Traceback
// SUITE: error: --args: only kernel files take scalars
// HELP: Scalars too, by name:
// HELP: --args [VALUE ...]

#include <stddef.h>

double rd_loss(double *u, double *tmp, size_t n, size_t T, double dt, double k) {
  for (size_t t = 0; t < T; t++) {
    for (size_t i = 1; i + 1 < n; i++)
      tmp[i] = u[i] + dt * (k * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - u[i] * u[i] * u[i]);
    for (size_t i = 1; i + 1 < n; i++)
      u[i] = tmp[i];
  }
  double s = 0.0;
  for (size_t i = 0; i < n; i++)
    s += u[i] * u[i];
  return s;
}

double rd_grad(double *u, double *du, double *tmp, double *dtmp, size_t n, size_t T,
               double dt, double k) {
  return __enzyme_autodiff((void *)rd_loss, enzyme_dup, u, du, enzyme_dup, tmp, dtmp,
                           enzyme_const, n, enzyme_const, T, enzyme_const, dt,
                           enzyme_const, k);
}
