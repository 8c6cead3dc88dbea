// `for (;;)` (and `for (init;; inc)`), as C written for Enzyme loops until a `break` or
// a `return`: an `scf.while` whose test is the loop's `running` flag. Before, it was "unsupported C: a for loop without a condition".
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, int n) {
  double s = 0.0;
  int i = 0;
  for (;;) {
    if (i >= n)
      break;
    s += x[i] * x[i];
    i++;
  }
  return s;
}

double g(double *x, int n) {
  double s = 0.0;
  for (int i = 0;; i++) {
    s += x[i];
    if (i == n - 1)
      return s * x[0];
  }
}

// The test is the last carried value, the flag that a break or a return clears:
// CHECK:      func.func @f(
// CHECK:        scf.while ({{.*}}, %[[R:[0-9]+]] = %{{[0-9]+}}) : (f64, index, i1)
// CHECK-NEXT:     scf.condition(%[[R]])
// CHECK:      func.func @g(
// CHECK:        scf.while ({{.*}}, %[[Q:[0-9]+]] = %{{[0-9]+}}) : (f64, index, i1, f64, i1)
// CHECK-NEXT:     scf.condition(%[[Q]])
