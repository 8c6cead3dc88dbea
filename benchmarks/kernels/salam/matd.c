// matd: matrix-vector product, then a product reduction, from gem5-SALAM's AD suite.
// Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/matd/hw/matd.c at commit
// fab1e5a2712443076485ff9049e18afa25d435c3 (`matvec_real`, handed to __enzyme_autodiff
// with the matrix enzyme_const and the vector and its shadow).
//   out[i] = sum_j mat[i*M + j] * vec[j];  sum = SUM0; for i: sum *= out[i] + out[i]
// Sizes: N = M = 400 doubles (mat 1,280,000 bytes, vec 3,200); their forward pass makes
// 321,317 cluster-cache accesses in gem5_salam_results.csv (2 x 400 x 400 loads and the
// out[] traffic). Same loops, types and sizes; `out` is malloc'd as theirs. Differs:
// - their product starts at `double sum = 0`, so their loss and gradient are identically
//   zero (the computation and its traffic are still done); SUM0 keeps that start (0) at
//   the real size, the tests use SUM0 = 1 so that the gradient is not zero;
// - the matrix is enzyme_const as theirs: the gradient is the specialization
//   `matvec_real_cd_grad` (no shadow of mat, no d mat updates);
// - the inner loop's `#pragma clang loop unroll_count(16)` is theirs at d68b91f (the
//   commit of their CSV; at fab1e5a it is commented out);
// - pointer parameters are array parameters of the same sizes (static shapes).
#include <stdlib.h>
#ifndef N
#define N 400
#endif
#ifndef M
#define M 400
#endif
#ifndef SUM0
#define SUM0 0
#endif

double matvec_real(double mat[M * M], double vec[N]) {
  double *out = (double *)malloc(sizeof(double) * M);
  for (int i = 0; i < M; i++) {
    out[i] = 0;
#pragma clang loop unroll_count(16)
    for (int j = 0; j < N; j++) {
      out[i] += mat[i * M + j] * vec[j];
    }
  }
  double sum = SUM0;
  for (int i = 0; i < M; i++) {
    sum *= out[i] + out[i];
  }
  return sum;
}

void matd_enzyme(double *mat, double *vec, double *dvec) {
  __enzyme_autodiff((void *)matvec_real, enzyme_const, mat, enzyme_dup, vec, dvec);
}
