#include <enzyme/enzyme.h>
static double v = 2.0;
double g(double x) { return __enzyme_autodiff((void *)&v, x); }
