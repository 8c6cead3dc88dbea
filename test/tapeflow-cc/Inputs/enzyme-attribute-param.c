#include <enzyme/enzyme.h>
static double h(double *y __attribute__((enzyme_inactive)), double x) { return y[0] * x; }
double f(double *x, double *y) { return h(y, x[0]) * x[1]; }
void g(double *x, double *dx, double *y, double *dy) { __enzyme_autodiff((void *)f, x, dx, y, dy); }
