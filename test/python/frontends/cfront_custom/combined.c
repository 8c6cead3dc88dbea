// Enzyme's customcombined.c shape: a custom augment and gradient, deliberately not the
// derivative of square_ (its gradient says 13 where 2 * x is), registered for square_.
#include <stddef.h>
double __enzyme_autodiff(void *, ...);

int augment = 0;
int gradient = 0;

void square_(const double *src, double *dest) { *dest = *src * *src; }

void *augment_square_(const double *src, const double *d_src, double *dest, double *d_dest) {
  augment++;
  *dest = 7.0;
  *d_dest = 11.0;
  return NULL;
}

void gradient_square_(const double *src, double *d_src, const double *dest,
                      const double *d_dest, void *tape) {
  gradient++;
  *d_src = 13.0;
}

void *__enzyme_register_gradient_square[] = {
    (void *)square_, (void *)augment_square_, (void *)gradient_square_};

double square(double x) {
  double y;
  square_(&x, &y);
  return y;
}

int main(void) { return (int)__enzyme_autodiff((void *)square, 3.0); }
