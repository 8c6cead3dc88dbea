/* A CBLAS subset for TapeFlow's C frontend (tapeflow-cc): ddot, daxpy, dscal, dnrm2, dgemv
 * and dgemm, in row- or column-major layout, with or without transposes.
 *
 * `#include <cblas.h>` finds this file on the frontend's include path. The routines are
 * defined here, as plain loops, so the frontend translates them as any function of the
 * file and the AD pass differentiates them as it does every loop: no derivative rules,
 * and their tapes stream as any loop's (README, "C kernels"). Their values are the
 * reference BLAS's up to rounding (the sums run in another order). As in the reference
 * BLAS, a negative increment walks its vector backwards, `beta == 0` does not read the
 * output, dscal and dnrm2 do nothing (0) for an increment below 1, and a transpose flag
 * other than CblasNoTrans (CblasConjTrans too: the values are real) transposes.
 */
#ifndef TAPEFLOW_CBLAS_H
#define TAPEFLOW_CBLAS_H

typedef enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_ORDER;
typedef CBLAS_ORDER CBLAS_LAYOUT;
typedef enum CBLAS_TRANSPOSE {
  CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113
} CBLAS_TRANSPOSE;

/* The first element of a vector of n elements with increment inc (the last for inc < 0). */
#define TAPEFLOW_CBLAS_START(n, inc) ((inc) > 0 ? 0 : (1 - (n)) * (inc))

static inline double cblas_ddot(const int N, const double *X, const int incX,
                                const double *Y, const int incY) {
  const int x0 = TAPEFLOW_CBLAS_START(N, incX), y0 = TAPEFLOW_CBLAS_START(N, incY);
  double sum = 0.0;
  for (int i = 0; i < N; i++)
    sum += X[x0 + i * incX] * Y[y0 + i * incY];
  return sum;
}

static inline void cblas_daxpy(const int N, const double alpha, const double *X,
                               const int incX, double *Y, const int incY) {
  const int x0 = TAPEFLOW_CBLAS_START(N, incX), y0 = TAPEFLOW_CBLAS_START(N, incY);
  for (int i = 0; i < N; i++)
    Y[y0 + i * incY] = Y[y0 + i * incY] + alpha * X[x0 + i * incX];
}

static inline void cblas_dscal(const int N, const double alpha, double *X, const int incX) {
  const int n = incX > 0 ? N : 0;
  for (int i = 0; i < n; i++)
    X[i * incX] = alpha * X[i * incX];
}

static inline double cblas_dnrm2(const int N, const double *X, const int incX) {
  const int n = incX > 0 ? N : 0;
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += X[i * incX] * X[i * incX];
  return __builtin_sqrt(sum);
}

/* Y := alpha op(A) X + beta Y, op(A) M x N (N x M transposed). Element (r, c) of op(A) is
 * A[r * sr + c * sc]: along a storage row when the layout is row-major and A not
 * transposed, or column-major and transposed. */
static inline void cblas_dgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                               const int M, const int N, const double alpha, const double *A,
                               const int lda, const double *X, const int incX,
                               const double beta, double *Y, const int incY) {
  const int trans = TransA != CblasNoTrans;
  const int along = (layout == CblasRowMajor) != trans;
  const int sr = along ? lda : 1, sc = along ? 1 : lda;
  const int rows = trans ? N : M, cols = trans ? M : N;
  const int x0 = TAPEFLOW_CBLAS_START(cols, incX), y0 = TAPEFLOW_CBLAS_START(rows, incY);
  for (int r = 0; r < rows; r++) {
    double sum = 0.0;
    for (int c = 0; c < cols; c++)
      sum += A[r * sr + c * sc] * X[x0 + c * incX];
    double y = alpha * sum;
    if (beta != 0.0)
      y += beta * Y[y0 + r * incY];
    Y[y0 + r * incY] = y;
  }
}

/* C := alpha op(A) op(B) + beta C, op(A) M x K, op(B) K x N, C M x N, with the strides of
 * dgemv's op(A) for both operands. */
static inline void cblas_dgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                               const CBLAS_TRANSPOSE TransB, const int M, const int N,
                               const int K, const double alpha, const double *A,
                               const int lda, const double *B, const int ldb,
                               const double beta, double *C, const int ldc) {
  const int row = layout == CblasRowMajor;
  const int along_a = row != (TransA != CblasNoTrans);
  const int along_b = row != (TransB != CblasNoTrans);
  const int ai = along_a ? lda : 1, ak = along_a ? 1 : lda;
  const int bk = along_b ? ldb : 1, bj = along_b ? 1 : ldb;
  const int ci = row ? ldc : 1, cj = row ? 1 : ldc;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = 0.0;
      for (int k = 0; k < K; k++)
        sum += A[i * ai + k * ak] * B[k * bk + j * bj];
      double c = alpha * sum;
      if (beta != 0.0)
        c += beta * C[i * ci + j * cj];
      C[i * ci + j * cj] = c;
    }
}

#undef TAPEFLOW_CBLAS_START

/* The rest of CBLAS that code calls most, declared only: a call to one compiles, and the
 * frontend refuses it with one located line that lists the routines above. */
typedef enum CBLAS_UPLO { CblasUpper = 121, CblasLower = 122 } CBLAS_UPLO;
typedef enum CBLAS_DIAG { CblasNonUnit = 131, CblasUnit = 132 } CBLAS_DIAG;
typedef enum CBLAS_SIDE { CblasLeft = 141, CblasRight = 142 } CBLAS_SIDE;
float cblas_sdot(const int N, const float *X, const int incX, const float *Y, const int incY);
double cblas_dasum(const int N, const double *X, const int incX);
int cblas_idamax(const int N, const double *X, const int incX);
void cblas_dcopy(const int N, const double *X, const int incX, double *Y, const int incY);
void cblas_dswap(const int N, double *X, const int incX, double *Y, const int incY);
void cblas_saxpy(const int N, const float alpha, const float *X, const int incX, float *Y,
                 const int incY);
void cblas_sscal(const int N, const float alpha, float *X, const int incX);
void cblas_dger(const CBLAS_LAYOUT layout, const int M, const int N, const double alpha,
                const double *X, const int incX, const double *Y, const int incY, double *A,
                const int lda);
void cblas_dtrsv(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int N,
                 const double *A, const int lda, double *X, const int incX);
void cblas_sgemv(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA, const int M,
                 const int N, const float alpha, const float *A, const int lda,
                 const float *X, const int incX, const float beta, float *Y, const int incY);
void cblas_sgemm(const CBLAS_LAYOUT layout, const CBLAS_TRANSPOSE TransA,
                 const CBLAS_TRANSPOSE TransB, const int M, const int N, const int K,
                 const float alpha, const float *A, const int lda, const float *B,
                 const int ldb, const float beta, float *C, const int ldc);
void cblas_dsyrk(const CBLAS_LAYOUT layout, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE Trans, const int N, const int K, const double alpha,
                 const double *A, const int lda, const double beta, double *C,
                 const int ldc);
void cblas_dtrsm(const CBLAS_LAYOUT layout, const CBLAS_SIDE Side, const CBLAS_UPLO Uplo,
                 const CBLAS_TRANSPOSE TransA, const CBLAS_DIAG Diag, const int M,
                 const int N, const double alpha, const double *A, const int lda,
                 double *B, const int ldb);
#endif
