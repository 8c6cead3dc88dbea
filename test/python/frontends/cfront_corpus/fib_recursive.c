// A recursive power function, differentiated with respect to its base.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double power(double x, int n) {
  if (n == 0) return 1.0;
  return x * power(x, n - 1);
}

int main() {
  double d = __enzyme_autodiff((void *)power, 2.0, 5);
  printf("%f\n", d);
}
