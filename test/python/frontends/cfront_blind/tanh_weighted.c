// Weighted sum of tanh activations; gradients to both weights and inputs.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double tanh_sum(double *w, double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += w[i] * tanh(x[i]);
  return s;
}

int main(void) {
  double w[3] = {0.5, -1.0, 2.0};
  double x[3] = {0.1, 1.0, -0.7};
  double dw[3] = {0.0, 0.0, 0.0};
  double dx[3] = {0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)tanh_sum, w, dw, x, dx, 3);
  for (int i = 0; i < 3; i++)
    printf("dw[%d] = %f dx[%d] = %f\n", i, dw[i], i, dx[i]);
  return 0;
}
