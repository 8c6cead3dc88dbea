// The Euclidean norm, arguments left unannotated (Enzyme's defaults).
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double norm(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i)
    s += x[i] * x[i];
  return sqrt(s);
}

int main(void) {
  double x[3] = {3.0, 4.0, 12.0};
  double dx[3] = {0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)norm, x, dx, 3);
  printf("%g %g %g\n", dx[0], dx[1], dx[2]);
  return 0;
}
