// Weighted sum of squares walking two pointers up to an end pointer, the
// idiom of C code that avoids indices.
#include <stdio.h>

int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

double walk(double *x, double *w, int n) {
  double s = 0.0;
  const double *end = x + n;
  const double *q = w;
  for (const double *p = x; p != end; ++p, ++q)
    s += *q * *p * *p;
  return s;
}

int main(void) {
  double x[4] = {1.0, -0.5, 2.0, 0.25};
  double w[4] = {0.5, 1.0, 1.5, 2.0};
  double dx[4] = {0};
  __enzyme_autodiff((void *)walk, enzyme_dup, x, dx, enzyme_const, w,
                    enzyme_const, 4);
  for (int i = 0; i < 4; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
