#include <stdio.h>
double f(double *x) { printf("%f\n", x[0]); return x[0]; }
