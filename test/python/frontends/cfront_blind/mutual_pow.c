// Two mutually recursive functions: x^n by alternating even and odd steps.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double odd_pow(double x, int n);

double even_pow(double x, int n) {
  if (n == 0)
    return 1.0;
  return x * odd_pow(x, n - 1);
}

double odd_pow(double x, int n) {
  return x * even_pow(x, n - 1);
}

int main(void) {
  double dx = __enzyme_autodiff((void *)even_pow, 1.3, 6);
  printf("d/dx x^6 at 1.3 = %f\n", dx);
  return 0;
}
