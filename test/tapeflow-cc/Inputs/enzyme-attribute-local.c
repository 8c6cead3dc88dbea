#include <enzyme/enzyme.h>
static double h(double x) {
  double t __attribute__((enzyme_inactive)) = x;
  return t * x;
}
double f(double *x) { return h(x[0]); }
void g(double *x, double *dx) { __enzyme_autodiff((void *)f, x, dx); }
