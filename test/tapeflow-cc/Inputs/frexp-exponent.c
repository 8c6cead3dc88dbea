#include <math.h>
double f(double x, int *e) { return frexp(x, e); }
