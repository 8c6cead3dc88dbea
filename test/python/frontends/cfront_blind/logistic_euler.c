// Explicit Euler integration of logistic growth; derivative of the final
// population with respect to the initial value and the rate.
#include <stdio.h>

extern int enzyme_out, enzyme_const;
extern double __enzyme_autodiff(void *, ...);

double logistic(double x0, double r, double dt, int steps) {
  double x = x0;
  for (int s = 0; s < steps; s++)
    x = x + dt * r * x * (1.0 - x);
  return x;
}

int enzyme_out, enzyme_const;

int main(void) {
  double dx0 = __enzyme_autodiff((void *)logistic, enzyme_out, 0.1,
                                 enzyme_const, 1.3, enzyme_const, 0.05,
                                 enzyme_const, 40);
  double dr = __enzyme_autodiff((void *)logistic, enzyme_const, 0.1,
                                enzyme_out, 1.3, enzyme_const, 0.05,
                                enzyme_const, 40);
  printf("dx/dx0 = %f, dx/dr = %f\n", dx0, dr);
  return 0;
}
