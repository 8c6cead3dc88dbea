#include <stdlib.h>
double f(double x, int n) {
  void *p = malloc(n * sizeof(double));
  double *d = (double *)p;
  float *g = (float *)p;
  d[0] = x; g[2] = 1.0f;
  double s = d[0];
  free(p);
  return s;
}
