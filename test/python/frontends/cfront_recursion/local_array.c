// Local fixed-size arrays passed to recursive functions: the C frontend casts each
// memref<2xf64> to memref<?xf64> at the call, and its shadow is cast the same way; a
// cast in a loop is recast in the reverse (a memref on a tape would stop the regions).
double __enzyme_autodiff(void *, ...);

double sumsq(const double *x, int n) {
  if (n == 0)
    return 0.0;
  return x[n - 1] * x[n - 1] + sumsq(x, n - 1);
}

double scaled(const double *x, int n) {
  double b[2];
  b[0] = 2.0 * x[0];
  b[1] = x[1];
  if (n == 0)
    return sumsq(b, 2);
  return scaled(b, n - 1) * x[0];
}

double local(double a0, double a1, int n) {
  double a[2];
  a[0] = a0;
  a[1] = a1 * a0;
  double s = sumsq(a, 2) + scaled(a, n);
  for (int i = 0; i < 2; i++) {
    double c[2];
    c[0] = a[i];
    c[1] = a0 * i;
    s += sumsq(c, 2) * scaled(a, i);
  }
  return s;
}

int main(void) { return (int)__enzyme_autodiff((void *)local, 0.7, -1.3, 3); }
