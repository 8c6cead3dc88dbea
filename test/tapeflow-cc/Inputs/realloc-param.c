#include <stdlib.h>
double f(double *x, int n) {
  double *p = realloc(x, 2 * n * sizeof(double));
  double s = p[0];
  free(p);
  return s;
}
