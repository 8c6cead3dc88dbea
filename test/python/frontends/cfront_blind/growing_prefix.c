// Running prefix sums kept in a buffer that realloc grows by one element per
// step, then half the sum of their squares. Enzyme differentiates through
// realloc: the shadow buffer is reallocated alongside the primal one.
#include <stdio.h>
#include <stdlib.h>

extern double __enzyme_autodiff(void *, ...);
int enzyme_const;

double prefix_energy(const double *x, int n) {
  double *sums = NULL;
  double acc = 0.0;
  for (int i = 0; i < n; i++) {
    sums = (double *)realloc(sums, (i + 1) * sizeof(double));
    acc += x[i];
    sums[i] = acc;
  }
  double e = 0.0;
  for (int i = 0; i < n; i++)
    e += sums[i] * sums[i];
  free(sums);
  return 0.5 * e;
}

int main(void) {
  double x[4] = {1.0, -0.5, 2.0, 0.25};
  double dx[4] = {0.0};
  __enzyme_autodiff((void *)prefix_energy, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
