// Extended Rosenbrock function.
#include <stdio.h>
#include "enzyme/enzyme.h"

double rosenbrock(const double *x, int n) {
  double f = 0.0;
  for (int i = 0; i < n - 1; i++) {
    double t1 = x[i + 1] - x[i] * x[i];
    double t2 = 1.0 - x[i];
    f += 100.0 * t1 * t1 + t2 * t2;
  }
  return f;
}

int main(void) {
  double x[4] = {-1.2, 1.0, 0.5, 0.8};
  double g[4] = {0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)rosenbrock, enzyme_dup, x, g, enzyme_const, 4);
  printf("g = [%f, %f, %f, %f]\n", g[0], g[1], g[2], g[3]);
  return 0;
}
