// A file-scope constant table of weights used inside the function.
#include <math.h>
#include <stdio.h>

static const double weights[4] = {0.1, 0.2, 0.3, 0.4};

double __enzyme_autodiff(void *, ...);

double weighted_cos(double *theta) {
  double s = 0.0;
  for (int i = 0; i < 4; i++)
    s += weights[i] * cos(theta[i]);
  return s;
}

int main(void) {
  double theta[4] = {0.0, 0.5, 1.0, 1.5};
  double dtheta[4] = {0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)weighted_cos, theta, dtheta);
  for (int i = 0; i < 4; i++)
    printf("%f\n", dtheta[i]);
  return 0;
}
