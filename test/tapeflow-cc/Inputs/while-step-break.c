double f(const double *x, int n) {
  double s = 0.0;
  while (n--) {
    if (x[n] < 0.0)
      break;
    s += x[n];
  }
  return s;
}
