// The smallest Enzyme program: a scalar function, an unannotated active
// scalar argument, the derivative returned by __enzyme_autodiff.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double square(double x) { return x * x; }

int main(void) {
  double x = 3.0;
  double dx = __enzyme_autodiff((void *)square, x);
  printf("square'(%f) = %f\n", x, dx);
  return 0;
}
