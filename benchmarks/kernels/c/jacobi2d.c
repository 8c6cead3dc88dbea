// jacobi2d: T double sweeps of a 5-point stencil; the C twin of ../small/jacobi2d.mlir.
#ifndef N
#define N 5
#endif
#ifndef T
#define T 2
#endif

double jacobi2d(double A[N][N], double B[N][N]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
  double loss = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double a = A[i][j];
      loss += 0.5 * (a * a);
    }
  return loss;
}

void jacobi2d_enzyme(double *A, double *dA, double *B, double *dB) {
  __enzyme_autodiff((void *)jacobi2d, enzyme_dup, A, dA, enzyme_dup, B, dB);
}
