// Column-major C = A^T B with dgemm, scaled with dscal, shifted with daxpy, then its
// Frobenius norm with dnrm2; the gradient flows into both A and B.
#include <cblas.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);

double gram_norm(double *A, double *B) {
  double C[6];
  double ones[6] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  // A is 2x2 (lda 2), B is 2x3 (ldb 2), C = A^T B is 2x3 (ldc 2), all column-major.
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, 2, 3, 2, 1.0, A, 2, B, 2, 0.0, C, 2);
  cblas_dscal(6, 0.5, C, 1);
  cblas_daxpy(6, 2.0, ones, 1, C, 1);
  return cblas_dnrm2(6, C, 1);
}

int main(void) {
  double A[4] = {1.0, -2.0, 0.5, 3.0};
  double B[6] = {0.2, 1.0, -1.5, 0.7, 2.0, -0.4};
  double dA[4] = {0}, dB[6] = {0};
  __enzyme_autodiff((void *)gram_norm, A, dA, B, dB);
  printf("%f %f %f %f\n", dA[0], dA[1], dA[2], dA[3]);
  return 0;
}
