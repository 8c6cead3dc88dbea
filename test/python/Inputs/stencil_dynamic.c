// A 1-D stencil over time steps, updated in place, sizes as arguments (issue 20): the C
// frontend computes the bound `n - 1` inside the time loop.
double stencil(double *u, long n, long steps) {
  for (long t = 0; t < steps; t++) {
    for (long i = 1; i < n - 1; i++) {
      u[i] = u[i] + 0.25 * u[i - 1] * u[i + 1];
    }
  }
  double loss = 0.0;
  for (long i = 0; i < n; i++) loss += u[i] * u[i];
  return loss;
}

void stencil_enzyme(double *u, double *du, long n, long steps) {
  __enzyme_autodiff((void *)stencil, enzyme_dup, u, du, enzyme_const, n, enzyme_const, steps);
}
