// The #define-sized twin of stencil_dynamic.c (N = 9, STEPS = 5: 35 records of 16 B).
#define N 9
#define STEPS 5
double stencil(double u[N]) {
  for (long t = 0; t < STEPS; t++) {
    for (long i = 1; i < N - 1; i++) {
      u[i] = u[i] + 0.25 * u[i - 1] * u[i + 1];
    }
  }
  double loss = 0.0;
  for (long i = 0; i < N; i++) loss += u[i] * u[i];
  return loss;
}

void stencil_enzyme(double *u, double *du) {
  __enzyme_autodiff((void *)stencil, enzyme_dup, u, du);
}
