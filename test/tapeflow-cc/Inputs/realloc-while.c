#include <stdlib.h>
double f(double x, int n) {
  double *p = 0;
  int i = 0;
  while (i < n) {
    p = realloc(p, (i + 1) * sizeof(double));
    p[i] = x;
    i++;
  }
  return p[0];
}
