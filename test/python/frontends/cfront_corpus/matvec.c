// y = A x, then a squared-norm loss; A is row-major, each row taken as a pointer.
#include <stdio.h>
#include <stdlib.h>
#include <enzyme/enzyme.h>

double loss(const double *A, const double *x, int n, int m) {
  double *y = (double *)malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    const double *row = A + i * m;
    double acc = 0.0;
    for (int j = 0; j < m; j++)
      acc += row[j] * x[j];
    y[i] = acc;
  }
  double l = 0.0;
  for (int i = 0; i < n; i++)
    l += 0.5 * y[i] * y[i];
  free(y);
  return l;
}

int main() {
  int n = 2, m = 3;
  double A[6] = {1, 2, 3, 4, 5, 6}, dA[6] = {0};
  double x[3] = {1, -1, 0.5}, dx[3] = {0};
  __enzyme_autodiff((void *)loss, A, dA, x, dx, n, m);
  for (int i = 0; i < 6; i++) printf("dA[%d] = %f\n", i, dA[i]);
  for (int j = 0; j < 3; j++) printf("dx[%d] = %f\n", j, dx[j]);
  return 0;
}
