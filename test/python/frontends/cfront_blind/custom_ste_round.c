// Weights rounded to quarter steps in the forward pass, with a
// straight-through estimator registered for the rounding: its reverse returns
// the adjoint unchanged where round's true derivative is 0. The gradient that
// comes back is therefore the estimator's, r * a[i], not 0: it shows the
// registered rule is used rather than re-derived.
#include <math.h>
#include <stdio.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

__attribute__((noinline)) double quantize(double x) {
  return round(4.0 * x) / 4.0;
}

double aug_quantize(double x) { return quantize(x); }

double rev_quantize(double x, double d_ret) { return d_ret; }

void *__enzyme_register_gradient_quantize[3] = {
    (void *)quantize, (void *)aug_quantize, (void *)rev_quantize};

double qat_loss(const double *w, const double *a, int n) {
  double y = 0.0;
  for (int i = 0; i < n; i++)
    y += quantize(w[i]) * a[i];
  double r = y - 1.0;
  return 0.5 * r * r;
}

int main(void) {
  double w[4] = {0.3, -0.77, 1.12, 0.05};
  double dw[4] = {0.0};
  double a[4] = {1.0, 2.0, -0.5, 3.0};
  __enzyme_autodiff((void *)qat_loss, enzyme_dup, w, dw, enzyme_const, a,
                    enzyme_const, 4);
  for (int i = 0; i < 4; i++)
    printf("dw[%d] = %f\n", i, dw[i]);
  return 0;
}
