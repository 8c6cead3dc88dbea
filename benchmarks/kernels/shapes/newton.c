// newton: per element, Newton's iteration for the root of x^3 + x - c[i] from x = c[i]
// until |f(x)| <= 1e-12 (at most 50 steps), r[i] = the root, loss = sum r[i]^2; the C twin
// of small/newton.mlir (a true while loop: each element takes the steps it needs).
#ifndef N
#define N 6
#endif
#include <math.h>

double newton(double c[N], double r[N]) {
  double loss = 0.0;
  for (int i = 0; i < N; i++) {
    double x = c[i];
    int it = 0;
    while (fabs(x * x * x + x - c[i]) > 1e-12 && it < 50) {
      double x2 = x * x;
      double f = x2 * x + x - c[i];
      x = x - f / (3.0 * x2 + 1.0);
      it++;
    }
    r[i] = x;
    loss += x * x;
  }
  return loss;
}

void newton_enzyme(double *c, double *dc, double *r, double *dr) {
  __enzyme_autodiff((void *)newton, enzyme_dup, c, dc, enzyme_dup, r, dr);
}
