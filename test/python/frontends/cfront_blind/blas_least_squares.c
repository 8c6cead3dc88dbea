// Least squares through CBLAS: r = A x - b with dgemv, loss = 0.5 r.r with ddot.
#include <cblas.h>
#include <stdio.h>

int enzyme_const, enzyme_dup;
double __enzyme_autodiff(void *, ...);

#define M 3
#define N 2

double lsq(const double *A, const double *b, double *x) {
  double r[M];
  for (int i = 0; i < M; i++)
    r[i] = b[i];
  // r := 1.0 * A x + (-1.0) * r
  cblas_dgemv(CblasRowMajor, CblasNoTrans, M, N, 1.0, A, N, x, 1, -1.0, r, 1);
  return 0.5 * cblas_ddot(M, r, 1, r, 1);
}

int main(void) {
  double A[M * N] = {1.0, 2.0, -0.5, 1.5, 3.0, 0.25};
  double b[M] = {1.0, -1.0, 2.0};
  double x[N] = {0.4, -0.3};
  double dx[N] = {0.0, 0.0};
  __enzyme_autodiff((void *)lsq, enzyme_const, A, enzyme_const, b, enzyme_dup, x, dx);
  printf("dx = %f %f\n", dx[0], dx[1]);
  return 0;
}
