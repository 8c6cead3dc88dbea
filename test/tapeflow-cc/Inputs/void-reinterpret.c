double g(double *x) {
  void *v = x;
  float *f = (float *)v;
  return f[0];
}
