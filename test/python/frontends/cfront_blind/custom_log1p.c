// Logistic regression's negative log-likelihood through a hand-written stable
// log(1 + x) (Kahan's trick) that the user keeps a black box: its gradient is
// registered with __enzyme_register_gradient (the scalar interface: the
// augmented forward returns the primal, the reverse returns the argument's
// adjoint). The rule is the true derivative 1 / (1 + x).
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

__attribute__((noinline)) double stable_log1p(double x) {
  double u = 1.0 + x;
  if (u == 1.0)
    return x;
  return log(u) * x / (u - 1.0);
}

double aug_stable_log1p(double x) { return stable_log1p(x); }

double rev_stable_log1p(double x, double d_ret) { return d_ret / (1.0 + x); }

void *__enzyme_register_gradient_stable_log1p[3] = {
    (void *)stable_log1p, (void *)aug_stable_log1p, (void *)rev_stable_log1p};

// w: 2 weights; X: n rows of 2 features; y: labels +1 / -1
double logistic_nll(const double *w, const double *X, const double *y, int n) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) {
    double z = y[i] * (w[0] * X[2 * i] + w[1] * X[2 * i + 1]);
    acc += stable_log1p(exp(-z));
  }
  return acc;
}

int main(void) {
  double w[2] = {0.5, -0.25};
  double dw[2] = {0.0, 0.0};
  double X[8] = {1.0, 2.0, -0.5, 1.5, 2.0, -1.0, 0.3, 0.8};
  double y[4] = {1.0, -1.0, 1.0, -1.0};
  __enzyme_autodiff((void *)logistic_nll, enzyme_dup, w, dw, enzyme_const, X,
                    enzyme_const, y, enzyme_const, 4);
  printf("dw = %f %f\n", dw[0], dw[1]);
  return 0;
}
