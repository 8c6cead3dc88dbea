// The compile-time-size twin of reaction_diffusion.c.
#ifndef N
#define N 512
#endif
#ifndef T
#define T 8
#endif
double reaction_diffusion(double u[N], double v[N]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++)
      v[i] = u[i] + 0.1 * (u[i - 1] - 2.0 * u[i] + u[i + 1]) - 0.01 * u[i] * u[i] * u[i];
    for (int i = 1; i < N - 1; i++)
      u[i] = v[i];
  }
  double s = 0.0;
  for (int i = 0; i < N; i++)
    s += u[i] * u[i];
  return s;
}

void gradient(double u[N], double du[N], double v[N], double dv[N]) {
  __enzyme_autodiff((void *)reaction_diffusion, u, du, v, dv);
}
