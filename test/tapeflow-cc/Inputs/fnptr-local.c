#include <math.h>
double f(double *x) { double (*op)(double) = sin; return op(x[0]); }
