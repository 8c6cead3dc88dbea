double f(double *x, int n) {
  double s = 0.0;
  int i;
  for (i = 0; i < n; i++) s += x[i];
  s += x[i - 1];
  return s;
}
