// Population variance: two passes over the data, the mean reused.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double variance(double *x, int n) {
  double mean = 0.0;
  for (int i = 0; i < n; i++)
    mean += x[i];
  mean /= n;
  double v = 0.0;
  for (int i = 0; i < n; i++)
    v += (x[i] - mean) * (x[i] - mean);
  return v / n;
}

int main(void) {
  double x[5] = {2.0, 4.0, 4.0, 5.0, 7.0};
  double dx[5] = {0.0};
  __enzyme_autodiff((void *)variance, x, dx, 5);
  for (int i = 0; i < 5; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
