#include <enzyme/enzyme.h>
typedef double real __attribute__((enzyme_inactive));
static double h(double x) { return x * x; }
double f(double *x) { return h(x[0]); }
void g(double *x, double *dx) { __enzyme_autodiff((void *)f, x, dx); }
