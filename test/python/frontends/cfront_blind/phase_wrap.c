// Phases wrapped into one period with fmod before a quadratic penalty; the
// period itself is a differentiated scalar.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_out, enzyme_const;

double wrapped_penalty(double *theta, int n, double period) {
  double acc = 0.0;
  for (int i = 0; i < n; i++) {
    double r = fmod(theta[i], period);
    acc += r * r;
  }
  return acc;
}

int main(void) {
  double theta[5] = {7.0, -4.5, 0.3, 13.1, -0.8};
  double dtheta[5] = {0};
  double dperiod = __enzyme_autodiff((void *)wrapped_penalty, enzyme_dup, theta,
                                     dtheta, enzyme_const, 5, enzyme_out, 2.5);
  printf("dperiod = %f\n", dperiod);
  for (int i = 0; i < 5; i++)
    printf("dtheta[%d] = %f\n", i, dtheta[i]);
  return 0;
}
