// Clang builtins instead of math.h calls, as Enzyme's own tests write them.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double wave(double *x) {
  return __builtin_sin(x[0]) * __builtin_exp(x[1]) + __builtin_sqrt(x[2]);
}

int main(void) {
  double x[3] = {0.4, -0.2, 2.0};
  double dx[3] = {0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)wave, x, dx);
  printf("%f %f %f\n", dx[0], dx[1], dx[2]);
  return 0;
}
