// A recursive reduction: the sum of squares of the first n elements, one call per element.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double rsum(const double *x, int n) {
  if (n == 0)
    return 0.0;
  return x[n - 1] * x[n - 1] + rsum(x, n - 1);
}

int main(void) {
  double x[5] = {1.0, -2.0, 0.5, 3.0, -1.5};
  double dx[5] = {0.0};
  __enzyme_autodiff((void *)rsum, x, dx, 5);
  for (int i = 0; i < 5; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
