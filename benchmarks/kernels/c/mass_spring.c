// mass_spring: T explicit steps of a nonlinear spring chain, updated in place;
// N interior masses between two fixed ends; the C twin of ../small/mass_spring.mlir. F is scratch (forces of the current step).
#ifndef N
#define N 6
#endif
#ifndef T
#define T 4
#endif

double mass_spring(double x[N + 2], double v[N + 2], double F[N + 2]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N + 1; i++) {
      double xm = x[i - 1], x0 = x[i], xp = x[i + 1];
      double dl = x0 - xm, dr = xp - x0;
      double dl3 = dl * dl * dl, dr3 = dr * dr * dr;
      F[i] = 1.0 * (dr - dl) + 0.5 * (dr3 - dl3);
    }
    for (int i = 1; i < N + 1; i++) {
      double vn = v[i] + 0.1 * F[i];
      v[i] = vn;
      x[i] = x[i] + 0.1 * vn;
    }
  }
  double loss = 0.0;
  for (int i = 0; i < N + 2; i++) {
    double xi = x[i], vi = v[i];
    loss += xi * xi + vi * vi;
  }
  return loss;
}

void mass_spring_enzyme(double *x, double *dx, double *v, double *dv, double *F, double *dF) {
  __enzyme_autodiff((void *)mass_spring, enzyme_dup, x, dx, enzyme_dup, v, dv, enzyme_dup, F,
                    dF);
}
