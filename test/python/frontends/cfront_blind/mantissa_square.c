// Squares a value through its mantissa: frexp splits x into m * 2^e, the
// square of the mantissa is scaled back by ldexp (so the result is x*x / 2^e).
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double mantissa_square(double x) {
  int e;
  double m = frexp(x, &e);
  return ldexp(m * m, e);
}

int main(void) {
  double x = 5.5;
  double dx = __enzyme_autodiff((void *)mantissa_square, x);
  printf("d/dx = %f\n", dx);
  return 0;
}
