double f(double *x, int n) {
again:
  for (int i = 0; i < n; i++) { if (x[i] > 3.0) { x[i] = x[i] * 0.5; goto again; } }
  return x[0];
}
