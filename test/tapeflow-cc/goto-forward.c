// A forward `goto` to a label at the top level of the function body (the cleanup/exit
// idiom) is an early exit of the statements before the label: the goto sets an i1 flag
// and leaves the loops around it (their `running` flag), what follows it runs under
// `if (!jumped)`, and the label's statements run on every path. A backward goto is
// refused (errors.c), as are a label inside a block and a goto over another label.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-cc %S/Inputs/goto-nested-label.c 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not tapeflow-cc %S/Inputs/goto-over-label.c 2>&1 | filecheck %s --check-prefix=OVER

double scaled_sum(const double *x, int n, double cap) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    if (x[i] > cap)
      goto out;
    s += x[i] * x[i];
  }
  s = 0.5 * s;
out:
  return s + 1.0;
}

double demo(void) {
  double x[4] = {1.0, 2.0, 9.0, 3.0};
  double y[2] = {1.0, 2.0};
  return scaled_sum(x, 4, 5.0) + 100.0 * scaled_sum(y, 2, 5.0);
}

// CHECK-LABEL: func.func @scaled_sum(
// CHECK:         %{{[0-9]+}}, %{{[0-9]+}}, %[[JUMPED:[0-9]+]], %{{[0-9]+}} = scf.while ({{.*}}) : (f64, index, i1, i1) -> (f64, index, i1, i1) {
// CHECK:           %[[GO:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}} = scf.if %{{.*}} -> (i1, i1, i1) {
// CHECK:           scf.if %[[GO]] -> (f64) {
// CHECK:         %[[STAY:[0-9]+]] = arith.xori %[[JUMPED]], %{{.*}} : i1
// CHECK-NEXT:    %[[S:[0-9]+]] = scf.if %[[STAY]] -> (f64) {
// CHECK-NEXT:      arith.mulf
// CHECK:         arith.addf %[[S]], %{{.*}} : f64
// (x stops at 9.0: 1 + 4 + 1; y runs through: 0.5 * 5 + 1)
// OUT:         result[0]: f64 = 356.0
// NESTED:      error: {{.*}}goto-nested-label.c:4:3: unsupported C: a label inside a block (a goto may jump only to a label at the top level of the function body)
// NESTED-NOT:  Traceback
// OVER:        error: {{.*}}goto-over-label.c:2:16: unsupported C: a goto over another label
// OVER-NOT:    Traceback
