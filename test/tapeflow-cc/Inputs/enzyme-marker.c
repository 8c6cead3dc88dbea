#include <enzyme/enzyme.h>
extern int enzyme_width;
double f(double *x, int n) { return x[0]; }
void d(double *x, double *dx, int n) {
  __enzyme_autodiff((void *)f, enzyme_width, 2, x, dx, n);
}
