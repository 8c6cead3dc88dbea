// The Rosenbrock function of n variables; pow and an unannotated call.
#include <math.h>
#include <stdio.h>

void __enzyme_autodiff(void *, ...);

double rosenbrock(double *x, int n) {
  double f = 0;
  for (int i = 0; i < n - 1; i++) {
    f += 100.0 * pow(x[i + 1] - x[i] * x[i], 2) + pow(1.0 - x[i], 2);
  }
  return f;
}

int main() {
  double x[4] = {-1.2, 1.0, -1.2, 1.0};
  double g[4] = {0};
  __enzyme_autodiff((void *)rosenbrock, x, g, 4);
  printf("grad = %f %f %f %f\n", g[0], g[1], g[2], g[3]);
}
