#include <stdlib.h>
double f(double x, int n) {
  double *p = malloc(sizeof(double));
  for (int i = 1; i < n; i++)
    p = realloc(p, (i + 1) * sizeof(double));
  p[0] = x;
  double s = p[0];
  free(p);
  return s;
}
