// Polynomial by Horner's rule: coefficients duplicated, evaluation point an
// active scalar whose derivative comes back from __enzyme_autodiff.
#include <stdio.h>

int enzyme_dup, enzyme_out, enzyme_const;
double __enzyme_autodiff(void *, ...);

double horner(const double *c, int degree, double x) {
  double r = c[degree];
  for (int k = degree - 1; k >= 0; k--)
    r = r * x + c[k];
  return r;
}

int main(void) {
  double c[4] = {1.0, -3.0, 0.5, 2.0};
  double dc[4] = {0.0, 0.0, 0.0, 0.0};
  double dx = __enzyme_autodiff((void *)horner, enzyme_dup, c, dc,
                                enzyme_const, 3, enzyme_out, 1.5);
  printf("dx = %f\n", dx);
  for (int k = 0; k < 4; k++)
    printf("dc[%d] = %f\n", k, dc[k]);
  return 0;
}
