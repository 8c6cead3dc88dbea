double f(double *x, int n, int m) {
  double s = 0.0;
  int i;
  for (int t = 0; t < m; t++)
    for (i = 0; i < n; i++) s += x[i];
  s += x[i - 1];
  return s;
}
