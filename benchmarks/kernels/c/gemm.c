// gemm: loss = 0.5 * ||A B||^2, the C twin of ../small/gemm.mlir (sizes: -DM= -DN= -DK=).
#ifndef M
#define M 3
#endif
#ifndef N
#define N 4
#endif
#ifndef K
#define K 5
#endif

double gemm(double A[M][K], double B[K][N]) {
  double loss = 0.0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0.0;
      for (int k = 0; k < K; k++)
        acc += A[i][k] * B[k][j];
      loss += 0.5 * (acc * acc);
    }
  return loss;
}

void gemm_enzyme(double *A, double *dA, double *B, double *dB) {
  __enzyme_autodiff((void *)gemm, enzyme_dup, A, dA, enzyme_dup, B, dB);
}
