// pwl: T rounds of piecewise-linear table lookup, in place; the C twin of ../small/pwl.mlir.
#ifndef N
#define N 5
#endif
#ifndef M
#define M 4
#endif
#ifndef T
#define T 3
#endif
#include <math.h>

double pwl(double x[N], double table[M + 1]) {
  for (int t = 0; t < T; t++)
    for (int i = 0; i < N; i++) {
      double s = fmin(fmax(x[i] * M, 0.0), M);
      long k = (long)s;
      k = k < 0 ? 0 : k;
      k = k > M - 1 ? M - 1 : k;
      double fr = s - (double)k;
      double y0 = table[k], y1 = table[k + 1];
      x[i] = y0 + (y1 - y0) * fr;
    }
  double loss = 0.0;
  for (int i = 0; i < N; i++) {
    double xi = x[i];
    loss += xi * xi;
  }
  return loss;
}

void pwl_enzyme(double *x, double *dx, double *table, double *dtable) {
  __enzyme_autodiff((void *)pwl, enzyme_dup, x, dx, enzyme_dup, table, dtable);
}
