// A counter declared once (`int t, i, j;`, as in gem5-SALAM's jacobi) and reused by later
// loops: inside a loop or branch whose only uses of it are as the counter of `scf.for`s
// (each assigns it first), its value before is dead and after is a stale counter, so it
// is not carried (it was, and the yield of the stale counter was refused). Reading it
// after the loop around its loop stays an error (right after its own loop it is the
// loop's final value, for-down.c).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/for-counter-read.c 2>&1 | filecheck %s --check-prefix=ERR

double f(double *a, double *b, int n, int steps) {
  int t, i, j;
  for (t = 0; t < steps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        b[i * n + j] = 0.25 * (a[i * n + j - 1] + a[i * n + j + 1] + a[i * n + j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        a[i * n + j] = b[i * n + j] * b[i * n + j];
  }
  double s = 0.0;
  for (i = 0; i < n * n; i++)
    s += a[i];
  return s;
}

// CHECK:     func.func @f(
// CHECK:       scf.for %t = %{{.*}} to %steps step %{{.*}} {
// CHECK:         scf.for %i = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %j = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:         scf.for %i_{{[0-9]+}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:       scf.for %i_{{[0-9]+}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64) {
// ERR:       error: {{.*}}for-counter-read.c:6:10: unsupported C: reading the counter 'i' after its for loop
// ERR-NOT:   Traceback

// Issue 34's reproducer: `j`, the counter of a first nest, is stale when an outer loop
// around `for (j = 3; j >= 0; j--)` starts; it was refused ("reading the counter 'j' after
// its for loop") because that loop was an scf.while, which the outer loop carried `j`
// into. It is an scf.for now; and a loop that stays an scf.while (its test reads memory)
// and assigns the stale counter first does not carry it either.
double g(double *x, double *y, int n) {
  int i, j;
  double s = 0.0;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      s += x[i] * y[j];
  for (i = 0; i < n; i++)
    for (j = 3; j >= 0; j--)
      s += x[j];
  for (i = 0; i < n; i++)
    for (j = 3; j >= 0 && x[j] > 0.0; j--)
      s += y[j];
  return s;
}

// CHECK:     func.func @g(
// CHECK:       scf.for %i_{{[0-9]+}} = %{{.*}} to %n step %{{.*}} iter_args(%{{[^,]*}}) -> (f64) {
// CHECK:         scf.for %j_k = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{[^,]*}}) -> (f64) {
// CHECK:       scf.for %i_{{[0-9]+}} = %{{.*}} to %n step %{{.*}} iter_args(%{{[^,]*}}) -> (f64) {
// CHECK:         scf.while ({{.*}}) : (f64, index) -> (f64, index)
