double f(double *x, int n, double s) { return x[0] * s; }
void d(double *x, int n, double s) {
  __enzyme_autodiff((void *)f, enzyme_out, x, n, s);
}
