// A scalar passed by address with its shadow (&x, &dx), pow from math.h.
#include <math.h>
#include <stdio.h>

int enzyme_dup;
void __enzyme_autodiff(void *, ...);

void cube_root_sum(double *x, double *out) { *out = pow(*x, 1.5) + 3.0 * *x; }

int main(void) {
  double x = 4.0, dx = 0.0;
  double out = 0.0, dout = 1.0;
  __enzyme_autodiff((void *)cube_root_sum, enzyme_dup, &x, &dx, enzyme_dup,
                    &out, &dout);
  printf("dx = %f\n", dx);
  return 0;
}
