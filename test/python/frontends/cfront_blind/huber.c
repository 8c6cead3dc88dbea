// Huber loss: a branch per element on fabs of the residual.
#include <math.h>
#include <stdio.h>

int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

double huber(double *r, int n, double delta) {
  double total = 0.0;
  for (int i = 0; i < n; i++) {
    double a = fabs(r[i]);
    if (a <= delta)
      total += 0.5 * r[i] * r[i];
    else
      total += delta * (a - 0.5 * delta);
  }
  return total;
}

int main(void) {
  double r[5] = {0.2, -3.0, 0.9, 2.5, -0.4};
  double dr[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)huber, enzyme_dup, r, dr, enzyme_const, 5,
                    enzyme_const, 1.0);
  for (int i = 0; i < 5; i++)
    printf("dr[%d] = %f\n", i, dr[i]);
  return 0;
}
