double f(double *x) {
  int i = 0;
  double s = 0.0;
  while ((x[i] = 0.5 * x[i]) > 1.0)
    s += 1.0;
  return s;
}
