double f(double *x) {
  double *b = (double *)0;
  return x[0] * b[0];
}
