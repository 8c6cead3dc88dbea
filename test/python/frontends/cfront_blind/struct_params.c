// Model parameters in a struct passed by pointer with a shadow struct; the
// scalar input is active and its derivative is returned.
#include <math.h>
#include <stdio.h>

typedef struct {
  double a;
  double b;
} Params;

double __enzyme_autodiff(void *, ...);

double model(Params *p, double x) { return p->a * x * x + p->b * sin(x); }

int main(void) {
  Params p = {2.0, -0.5};
  Params dp = {0.0, 0.0};
  double x = 0.8;
  double dx = __enzyme_autodiff((void *)model, &p, &dp, x);
  printf("da = %f db = %f dx = %f\n", dp.a, dp.b, dx);
  return 0;
}
