struct S { double *out; double a; };

double f(double x) {
  struct S m;
  return m.out[0] * x;
}
