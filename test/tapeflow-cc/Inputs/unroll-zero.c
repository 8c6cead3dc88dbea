double f(double *x, int n) {
  double s = 0.0;
#pragma GCC unroll 0
  for (int i = 0; i < n; i++)
    s += x[i];
  return s;
}
