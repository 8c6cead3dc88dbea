// A numerically stable log-sum-exp, as written for Enzyme: the maximum starts at
// -INFINITY, the sum is over exp(x - max).
#include <math.h>
#include <stdio.h>
#include <enzyme/enzyme.h>

double logsumexp(const double *x, size_t n) {
  double m = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (x[i] > m) m = x[i];
  double s = 0.0;
  for (size_t i = 0; i < n; i++)
    s += exp(x[i] - m);
  return m + log(s);
}

int main() {
  double x[5] = {1, 2, 3, 4, 5}, dx[5] = {0};
  __enzyme_autodiff((void *)logsumexp, enzyme_dup, x, dx, enzyme_const, (size_t)5);
  for (int i = 0; i < 5; i++) printf("%f ", dx[i]);
  printf("\n");
}
