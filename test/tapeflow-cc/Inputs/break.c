double f(double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s += x[i];
    if (s > 1.0) { s = 0.0; break; }
  }
  return s;
}
