#include <enzyme/enzyme.h>
struct __attribute__((enzyme_inactive)) S { double a; };
static double h(double x) { return x * x; }
double f(double *x) { return h(x[0]); }
void g(double *x, double *dx) { __enzyme_autodiff((void *)f, x, dx); }
