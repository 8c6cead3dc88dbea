void add(double *a, const double *b) { *a += *b; }

double f(double x) {
  add(&x, &x);
  return x;
}
