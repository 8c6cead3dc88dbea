// Forward mode on a scalar function: one directional derivative per call, the seed
// (tangent) follows each active argument; enzyme_const holds x fixed.
#include <math.h>
#include <stdio.h>

extern int enzyme_const, enzyme_dup;
extern double __enzyme_fwddiff(void *, ...);

double f(double x, double y) {
  return x * x * sin(y) + exp(x * y);
}

int main(void) {
  double x = 1.2, y = 0.7;
  double dfdx = __enzyme_fwddiff((void *)f, x, 1.0, y, 0.0);
  double dfdy = __enzyme_fwddiff((void *)f, enzyme_const, x, enzyme_dup, y, 1.0);
  printf("df/dx = %f, df/dy = %f\n", dfdx, dfdy);
  return 0;
}
