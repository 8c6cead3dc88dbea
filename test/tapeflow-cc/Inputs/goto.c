double f(double *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i] > 3.0) goto out;
out:
  return x[0];
}
