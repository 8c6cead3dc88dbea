// Euclidean norm with sqrt from math.h.
#include <math.h>
#include <stdio.h>

extern double __enzyme_autodiff(void *, double *, double *, int);

double l2norm(double *x, int n) {
  double ss = 0.0;
  for (int i = 0; i < n; i++)
    ss += x[i] * x[i];
  return sqrt(ss);
}

int main() {
  double x[3] = {3.0, -4.0, 12.0};
  double dx[3] = {0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)l2norm, x, dx, 3);
  printf("%f %f %f\n", dx[0], dx[1], dx[2]);
  return 0;
}
