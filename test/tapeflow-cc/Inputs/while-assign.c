double f(const double *x) {
  int i = 0;
  double s = 0.0;
  while (x[i++] > 0.0)
    s += 1.0;
  return s;
}
