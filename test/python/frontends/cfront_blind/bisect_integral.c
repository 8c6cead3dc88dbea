// Midpoint quadrature of a Gaussian by recursive bisection: the interval is
// halved `depth` times (the int argument sets the recursion's depth), each leaf
// contributing (b - a) f(midpoint). The upper end b is an active scalar: its
// derivative reaches the inner calls through both ends of their intervals.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const, enzyme_out;

static double gaussian(const double *p, double t) {
  return p[0] * exp(-p[1] * t * t);
}

double bisect_integral(const double *p, double a, double b, int depth) {
  double mid = 0.5 * (a + b);
  if (depth == 0)
    return (b - a) * gaussian(p, mid);
  return bisect_integral(p, a, mid, depth - 1) +
         bisect_integral(p, mid, b, depth - 1);
}

int main(void) {
  double p[2] = {1.5, 0.8};
  double dp[2] = {0.0, 0.0};
  double db = __enzyme_autodiff((void *)bisect_integral, enzyme_dup, p, dp,
                                enzyme_const, -1.0, enzyme_out, 2.0,
                                enzyme_const, 4);
  printf("dp = %f %f\n", dp[0], dp[1]);
  printf("db = %f\n", db);
  return 0;
}
