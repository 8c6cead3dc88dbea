// trisolve: forward substitution L x = b (L lower triangular), loss = 0.5 |x|^2; the C
// twin of small/trisolve.mlir (a triangular nest: the inner bound is the outer counter).
#ifndef N
#define N 5
#endif

double trisolve(double L[N][N], double b[N], double x[N]) {
  double loss = 0.0;
  for (int i = 0; i < N; i++) {
    double s = b[i];
    for (int j = 0; j < i; j++)
      s = s - L[i][j] * x[j];
    double xi = s / L[i][i];
    x[i] = xi;
    loss += 0.5 * (xi * xi);
  }
  return loss;
}

void trisolve_enzyme(double *L, double *dL, double *b, double *db, double *x, double *dx) {
  __enzyme_autodiff((void *)trisolve, enzyme_dup, L, dL, enzyme_dup, b, db, enzyme_dup, x,
                    dx);
}
