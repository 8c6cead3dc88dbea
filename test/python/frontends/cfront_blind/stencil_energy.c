// Three-point smoothing stencil into a scratch buffer allocated inside the
// differentiated function, then the energy of the smoothed signal.
#include <stdio.h>
#include <stdlib.h>

double __enzyme_autodiff(void *, ...);

double smooth_energy(double *u, int n) {
  double *v = (double *)malloc(n * sizeof(double));
  v[0] = u[0];
  v[n - 1] = u[n - 1];
  for (int i = 1; i < n - 1; i++)
    v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
  double e = 0.0;
  for (int i = 0; i < n; i++)
    e += v[i] * v[i];
  free(v);
  return e;
}

int main(void) {
  double u[6] = {1.0, 0.0, 2.0, -1.0, 0.5, 3.0};
  double du[6] = {0.0};
  __enzyme_autodiff((void *)smooth_energy, u, du, 6);
  for (int i = 0; i < 6; i++)
    printf("du[%d] = %f\n", i, du[i]);
  return 0;
}
