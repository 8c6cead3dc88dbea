// jacobi: one time step of PolyBench's jacobi-2d (two 5-point sweeps, A -> B -> A), from
// gem5-SALAM's AD suite (not in their result CSVs). Theirs: sfu-arch/gem5-SALAM,
// benchmarks/AD/jacobi/hw/jacobi.c at commit 149076911616aa43c7c2e462b9343e113f2e5061
// (`kernel_jacobi_2d`, handed to __enzyme_autodiff with A, B and their shadows).
// Size: N = 50 (two 50 x 50 double arrays, 40,000 bytes).
// Same loops, types and sizes. Differs:
// - their A and B are arrays of N row pointers (`double **`, each row malloc'd); here they
//   are N x N arrays (the same elements, without the row-pointer loads);
// - their counters `int t, i, j` are declared once for both sweeps; here each loop declares
//   its own (the C subset refuses a counter read after its loop, as the next loop's
//   re-initialisation looks to it);
// - theirs returns nothing; ours returns loss = sum of A's entries after the step.
// As in the bundled jacobi2d, the stencil is linear: the AD caches nothing.
#ifndef N
#define N 50
#endif

double kernel_jacobi_2d(double A[N][N], double B[N][N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      B[i][j] = (0.2) * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      A[i][j] = (0.2) * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  double loss = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      loss += A[i][j];
  return loss;
}

void jacobi_enzyme(double *A, double *dA, double *B, double *dB) {
  __enzyme_autodiff((void *)kernel_jacobi_2d, enzyme_dup, A, dA, enzyme_dup, B, dB);
}
