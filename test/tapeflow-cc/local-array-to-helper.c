// A local array passed to a helper that writes it (Enzyme users' RK4 stages: `rhs(s, k1)`
// with `double k1[2]`): the argument is a memref.cast of the alloca to the parameter's
// memref<?xf64>. The AD folds the cast's loads and stores into the alloca, so the helper's
// writes carry their adjoint (they were dropped, silently, before: the gradient lost k's
// part: 6 and 0). f(a, b) = 2a^2 + ab: df/da = 4a + b, df/db = a; at (3, 0.5): 12.5 and 3.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s --function f | tapeflow-opt --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
// RUN: tapeflow-cc %s --function f | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry f_grad --args 3.0 0.5 1.0 | filecheck %s --check-prefix=VAL

static void stage(const double *s, double *d) {
  d[0] = 2.0 * s[0];
  d[1] = s[0] * s[1];
}

double f(double a, double b) {
  double s[2] = {a, b};
  double k[2];
  stage(s, k);
  return k[0] * s[0] + k[1];
}

// CHECK: "memref.cast"(%k) : (memref<2xf64>) -> memref<?xf64>
// CHECK: func.call @stage
// GRAD-LABEL: func.func @f_grad
// GRAD-NOT: memref.cast
// GRAD: func.return
// VAL-NOT: Traceback
// VAL: result[0]: f64 = 12.5
// VAL-NEXT: result[1]: f64 = 3.0
