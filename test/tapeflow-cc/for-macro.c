// A `for` written by a macro (`#define FOR(i, n) for (int i = 0; i < n; i++)`, as in
// gem5-SALAM's kernels): its header is read from the macro's tokens, since libclang gives
// the loop's tokens where the macro is defined but its children's offsets where it
// expands (comparing the two placed the condition as the increment: "a for loop without
// a condition"). A header part from a macro that expands to nothing is refused.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/for-macro-empty.c 2>&1 | filecheck %s --check-prefix=ERR
#define FOR(i, n) for (int i = 0; i < (n); i++)
#define FOR_STEP(i, a, b, s) for (i = (a); i < (b); i += (s))

double f(double *x, int n) {
  double s = 0.0;
  FOR(i, n) FOR(j, n) s += x[i] * x[j];
  int k;
  FOR_STEP(k, 1, n, 2) s += x[k];
  return s;
}

// CHECK:     func.func @f(
// CHECK:       scf.for %i = %{{.*}} to %n step %{{.*}} iter_args
// CHECK:         scf.for %j = %{{.*}} to %n step %{{.*}} iter_args
// CHECK:       scf.for %k = %{{.*}} to %n step %{{.*}} iter_args
// ERR:       error: {{.*}}for-macro-empty.c:4:3: unsupported C: a for loop whose header parts come from macros that expand to nothing
// ERR-NOT:   Traceback
