#include <stdlib.h>
double f(double x, int n) {
  double **m = malloc(n * sizeof(double *));
  for (int i = 0; i < n; i++)
    m[i] = malloc((i + 1) * sizeof(double));
  m[0][0] = x;
  double s = m[0][0];
  for (int i = 0; i < n; i++) free(m[i]);
  free(m);
  return s;
}
