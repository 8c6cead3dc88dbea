// `return` before the end of a function, also inside loops (issue 17: gem5-SALAM's
// kernels; issue 23: Enzyme users' code): an i1 `returned` flag and the value so far,
// carried like break's flags. After a statement that may return, the rest of the body
// runs under `if (!returned)`; inside a loop a return is a break of that loop, and of
// each loop around it once the inner loop is left.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry sign --args -3.0 | filecheck %s --check-prefix=NEG
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo --args 0.5 | filecheck %s --check-prefix=FIRST

double sign(double x) {
  if (x > 0.0)
    return x * x;
  return -x;
}

double first_above(double *a, int n, double t) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (a[i * n + j] > t)
        return a[i * n + j];
  return t;
}

double demo(double t) {
  double a[16] = {0.1, 0.2, 0.3, 0.4, 0.45, 0.75, 0.9, 0.2};
  return first_above(a, 4, t);
}

// CHECK-LABEL: func.func @sign(
// CHECK:         %[[DONE:.*]], %{{.*}} = scf.if %{{.*}} -> (i1, f64) {
// CHECK:         %[[STAY:.*]] = arith.xori %[[DONE]], %{{.*}} : i1
// CHECK:         %{{.*}}, %[[V:.*]] = scf.if %[[STAY]] -> (i1, f64) {
// CHECK:         func.return %[[V]] : f64
// CHECK-LABEL: func.func @first_above(
// CHECK:         scf.while
// CHECK:           scf.while
// CHECK:           arith.xori
// CHECK:           arith.andi
// NEG:         result[0]: f64 = 3.0
// FIRST:       result[0]: f64 = 0.75
