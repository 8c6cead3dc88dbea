#include <stdlib.h>
double f(double x, int n) {
  double *p = malloc(sizeof(double));
  int cap = 1;
  for (int i = 0; i < n; i++) {
    if (i >= cap) {
      cap *= 2;
      p = realloc(p, cap * sizeof(double));
    }
    p[i] = x * i;
  }
  double s = p[n - 1];
  free(p);
  return s;
}
