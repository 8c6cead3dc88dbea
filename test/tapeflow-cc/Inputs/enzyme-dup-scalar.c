double f(double *x, int n, double s) { return x[0] * s; }
void d(double *x, double *dx, int n, double s, double ds) {
  __enzyme_autodiff((void *)f, x, dx, n, enzyme_dup, s, ds);
}
