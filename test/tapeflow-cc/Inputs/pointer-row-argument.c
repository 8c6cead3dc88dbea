double sum(double *r, int n) { double s = 0; for (int i = 0; i < n; i++) s += r[i]; return s; }

double f(double **pp, int n) {
  double *r = pp[0];
  return sum(r, n);
}
