// Mutual recursion with active scalars in and out: a continued fraction.
#include <math.h>
double __enzyme_autodiff(void *, ...);

double odd(double x, double y, int n);

double even(double x, double y, int n) {
  if (n == 0)
    return x;
  return x + y / odd(x, y, n - 1);
}

double odd(double x, double y, int n) {
  return y * sin(x) + 1.0 / even(x * 0.9, y, n - 1);
}

int main(void) {
  double dx = __enzyme_autodiff((void *)even, 1.3, 0.7, 6);
  return (int)dx;
}
