// log-sum-exp with fmax for the shift.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double lse(double *x, int n) {
  double m = -INFINITY;
  for (int i = 0; i < n; i++)
    m = fmax(m, x[i]);
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += exp(x[i] - m);
  return m + log(s);
}

int main(void) {
  double x[4] = {0.5, -1.0, 2.0, 1.5};
  double dx[4] = {0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)lse, x, dx, 4);
  for (int i = 0; i < 4; i++)
    printf("%f\n", dx[i]);
  return 0;
}
