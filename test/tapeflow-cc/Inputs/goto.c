double f(double *x, int n) {
again:
  if (x[0] > 3.0) { x[0] = x[0] * 0.5; goto again; }
  return x[0];
}
