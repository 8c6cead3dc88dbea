double f(double *x, int n, double s) { return x[0] * s; }
void d(double *x, double *dx, int n, int *dn, double s) {
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, n, dn, s);
}
