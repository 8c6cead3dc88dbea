// A quadrature routine that takes the integrand as a function pointer, and a
// loss that passes it one of two integrands: the gradient flows through the
// callback's parameters.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

static double gaussian(double t, const double *p) { return p[0] * t * t + p[1]; }
static double ramp(double t, const double *p) { return p[0] * t + p[1] * p[1]; }

static double trapezoid(double (*f)(double, const double *), const double *p,
                        double a, double b, int steps) {
  double h = (b - a) / steps;
  double s = 0.5 * (f(a, p) + f(b, p));
  for (int k = 1; k < steps; k++)
    s += f(a + k * h, p);
  return s * h;
}

double loss(double *p) {
  double (*g)(double, const double *) = gaussian;
  return trapezoid(g, p, 0.0, 1.0, 8) + 2.0 * trapezoid(ramp, p, 0.0, 2.0, 4);
}

int main(void) {
  double p[2] = {1.5, -0.5};
  double dp[2] = {0};
  __enzyme_autodiff((void *)loss, enzyme_dup, p, dp);
  printf("dp = %f %f\n", dp[0], dp[1]);
  return 0;
}
