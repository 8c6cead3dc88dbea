// dp: a dynamic program over an (N+1) x (M+1) table D (row 0 and column 0 given):
// D[i][j] = 0.75 D[i-1][j-1] + exp(-(a[i-1] - b[j-1])^2) when a[i-1] > b[j-1], else
// 0.9 min(sin D[i-1][j], sin D[i][j-1]); loss = D[N][M]. The C twin of small/dp.mlir:
// the values the reverse sweep needs are cached inside the branches.
#ifndef N
#define N 4
#endif
#ifndef M
#define M 5
#endif
#include <math.h>

double dp(double a[N], double b[M], double D[N + 1][M + 1]) {
  for (int i = 1; i < N + 1; i++) {
    double ai = a[i - 1];
    for (int j = 1; j < M + 1; j++) {
      double bj = b[j - 1];
      double v;
      if (ai > bj) {
        double e = ai - bj;
        v = 0.75 * D[i - 1][j - 1] + exp(-(e * e));
      } else {
        double su = sin(D[i - 1][j]);
        double sl = sin(D[i][j - 1]);
        v = 0.9 * (su < sl ? su : sl);
      }
      D[i][j] = v;
    }
  }
  return D[N][M];
}

void dp_enzyme(double *a, double *da, double *b, double *db, double *D, double *dD) {
  __enzyme_autodiff((void *)dp, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_dup, D, dD);
}
