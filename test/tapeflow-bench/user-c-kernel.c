// A user's own C kernel (not one of the bundled ones) runs three ways with the same
// table: the function handed to __enzyme_autodiff, inputs by tapeflow-run's seeded rule.
// REQUIRES: libclang
// RUN: rm -rf %t && tapeflow-bench --kernels %s --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t | filecheck %s
// CHECK: ## tapeflow-bench: kernel files, sizes and inputs as given, machine `default-45nm`
// CHECK: | kernel | tape (Enzyme) |
// CHECK: | chain | {{[0-9]+}} B | {{.*}} | bit-identical |
// CHECK: | **geomean** (1 kernels) |
// CHECK-NOT: Traceback

double tanh(double);

double chain(double x[16], double w[2]) {
  double s = 0.0;
  for (int i = 0; i < 16; i++)
    s = tanh(w[0] * s + w[1] * x[i]);
  return s * s;
}

void chain_enzyme(double *x, double *dx, double *w, double *dw) {
  __enzyme_autodiff((void *)chain, enzyme_dup, x, dx, enzyme_dup, w, dw);
}
