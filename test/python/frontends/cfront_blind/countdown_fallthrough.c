// Polynomial terms picked by a degree with a fall-through switch (Duff
// style: a higher degree adds every lower term), summed over a countdown
// loop `while (n--)` that walks the samples from the end.
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const, enzyme_out;

double series(double *c, double x, int degree) {
  double r = 0.0;
  switch (degree) {
  case 3:
    r += c[3] * x * x * x;
  case 2:
    r += c[2] * x * x;
  case 1:
    r += c[1] * x;
  default:
    r += c[0];
  }
  return r;
}

double fit(double *c, const double *xs, int n, int degree) {
  double s = 0.0;
  while (n--) {
    double v = series(c, xs[n], degree);
    s += v * v;
  }
  return s;
}

int main(void) {
  double c[4] = {0.5, -1.0, 0.25, 2.0};
  double dc[4] = {0};
  double xs[3] = {1.0, -0.5, 2.0};
  __enzyme_autodiff((void *)fit, enzyme_dup, c, dc, enzyme_const, xs,
                    enzyme_const, 3, enzyme_const, 2);
  for (int i = 0; i < 4; i++)
    printf("dc[%d] = %f\n", i, dc[i]);
  return 0;
}
