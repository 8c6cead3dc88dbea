// A user's C kernel whose __enzyme_autodiff call marks an array enzyme_const: the function
// benched is the specialization `weighted_dc`, whose gradient has no shadow for `w`
// (tapeflow.const). Before, the bench gave it a shadow anyway and every variant failed
// with "@weighted_dc_grad takes 4 argument(s), got 5".
// REQUIRES: libclang
// RUN: rm -rf %t && tapeflow-bench --kernels %s --machine default-45nm -j 1 --no-plots --no-progress --sweep none --out %t | filecheck %s
// CHECK: ## tapeflow-bench: kernel files, sizes and inputs as given, machine `default-45nm`
// CHECK: | weighted_dc {{.*}}| bit-identical |
// CHECK-NOT: ERROR
// CHECK-NOT: Traceback

double weighted(double x[16], double w[16]) {
  double r = 0.0;
  for (int i = 0; i < 16; i++)
    r += x[i] * x[i] * w[i];
  return r;
}

void weighted_enzyme(double *x, double *dx, double *w) {
  __enzyme_autodiff((void *)weighted, x, dx, enzyme_const, w);
}
