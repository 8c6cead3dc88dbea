#include <stdlib.h>
double f(double x, int n) {
  double **m = malloc(2 * sizeof(double *));
  m[0] = malloc(n * sizeof(double));
  m[1] = malloc(2 * n * sizeof(double));
  m[1][0] = x;
  double s = m[1][0];
  free(m[0]); free(m[1]); free(m);
  return s;
}
