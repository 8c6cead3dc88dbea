// Newton's iteration for sqrt(a), a fixed number of steps; the derivative
// of the result with respect to a.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double newton_sqrt(double a) {
  double y = a;
  for (int it = 0; it < 30; it++)
    y = 0.5 * (y + a / y);
  return y;
}

int main(void) {
  double a = 2.0;
  double da = __enzyme_autodiff((void *)newton_sqrt, a);
  printf("d sqrt(a)/da at %f = %f\n", a, da);
  return 0;
}
