// Reaction-diffusion in Enzyme's usual C style: sizes known only at run time.
double reaction_diffusion(double *u, double *v, int n, int T) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < n - 1; i++)
      v[i] = u[i] + 0.1 * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.01 * u[i] * u[i] * u[i];
    for (int i = 1; i < n - 1; i++)
      u[i] = v[i];
  }
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += u[i] * u[i];
  return s;
}

void gradient(double *u, double *du, double *v, double *dv, int n, int T) {
  __enzyme_autodiff((void *)reaction_diffusion, u, du, v, dv, n, T);
}
