// backsub: back substitution U x = y (U upper triangular), rows from the last, loss =
// 0.5 |x|^2; the C twin of small/backsub.mlir, whose loop counts k up with i = N - 1 - k.
#ifndef N
#define N 5
#endif

double backsub(double U[N][N], double y[N], double x[N]) {
  double loss = 0.0;
  for (int i = N - 1; i >= 0; i--) {
    double s = y[i];
    for (int j = i + 1; j < N; j++)
      s = s - U[i][j] * x[j];
    double xi = s / U[i][i];
    x[i] = xi;
    loss += 0.5 * (xi * xi);
  }
  return loss;
}

void backsub_enzyme(double *U, double *dU, double *y, double *dy, double *x, double *dx) {
  __enzyme_autodiff((void *)backsub, enzyme_dup, U, dU, enzyme_dup, y, dy, enzyme_dup, x,
                    dx);
}
