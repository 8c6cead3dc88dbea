// Two recursive calls per level and the result through a pointer (Enzyme's recurse.c).
double __enzyme_autodiff(void *, ...);

double fib(double *a, double *b, int n) {
  if (n <= 0)
    return *a * *b;
  return fib(a, b, n - 1) + 0.5 * fib(a, b, n - 2);
}

void fib_out(double *a, double *b, double *out, int n) { *out = fib(a, b, n); }

int main(void) {
  double a = 2.0, b = 3.0, da = 0.0, db = 0.0, out = 0.0, dout = 1.0;
  __enzyme_autodiff((void *)fib_out, &a, &da, &b, &db, &out, &dout, 7);
  return 0;
}
