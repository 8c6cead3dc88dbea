// Discrete Laplacian on the interior of an N x N grid stored flat, then its
// squared norm: nested loops with i*N+j indexing.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4

int enzyme_dup;
double __enzyme_autodiff(void *, ...);

double lap_energy(double *u) {
  double e = 0.0;
  for (int i = 1; i < N - 1; i++) {
    for (int j = 1; j < N - 1; j++) {
      double l = u[(i - 1) * N + j] + u[(i + 1) * N + j] + u[i * N + j - 1] +
                 u[i * N + j + 1] - 4.0 * u[i * N + j];
      e += l * l;
    }
  }
  return e;
}

int main(void) {
  double *u = (double *)malloc(sizeof(double) * N * N);
  double *du = (double *)malloc(sizeof(double) * N * N);
  memset(du, 0, sizeof(double) * N * N);
  for (int k = 0; k < N * N; k++)
    u[k] = (k * 7 % 5) * 0.5 - 1.0;
  __enzyme_autodiff((void *)lap_energy, enzyme_dup, u, du);
  for (int k = 0; k < N * N; k++)
    printf("du[%d] = %f\n", k, du[k]);
  free(u);
  free(du);
  return 0;
}
