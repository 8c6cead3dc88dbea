#include <stdio.h>
double helper(double);
double f(double *x) {
  printf("x0=%f\n", x[0]);
  return helper(x[0]);
}
