// Least-squares residual through a helper function; the matrix is constant.
#include <stdio.h>
#include <stdlib.h>

int enzyme_const, enzyme_dup;
double __enzyme_autodiff(void *, ...);

static double row_dot(const double *row, const double *x, int n) {
  double s = 0.0;
  for (int j = 0; j < n; j++)
    s += row[j] * x[j];
  return s;
}

double residual(const double *A, const double *y, double *x, int m, int n) {
  double r2 = 0.0;
  for (int i = 0; i < m; i++) {
    double r = row_dot(&A[i * n], x, n) - y[i];
    r2 += r * r;
  }
  return 0.5 * r2;
}

int main(void) {
  int m = 3, n = 2;
  double A[6] = {1.0, 2.0, 0.5, -1.0, 3.0, 1.0};
  double y[3] = {1.0, 0.0, 2.0};
  double x[2] = {0.3, -0.7};
  double dx[2] = {0.0, 0.0};
  __enzyme_autodiff((void *)residual, enzyme_const, A, enzyme_const, y,
                    enzyme_dup, x, dx, enzyme_const, m, enzyme_const, n);
  printf("dx = %f %f\n", dx[0], dx[1]);
  return 0;
}
