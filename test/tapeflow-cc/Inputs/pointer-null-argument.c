#include <stddef.h>
static double g(double *p, int n) {
  if (!p)
    return 0.0;
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += p[i] * p[i];
  return s;
}
double f(double *x, int n) { return g(x, n) + g(NULL, n); }
