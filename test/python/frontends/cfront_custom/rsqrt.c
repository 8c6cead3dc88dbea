// Enzyme's invsqrt.c shape: the fast inverse square root (bit punning) with a custom
// gradient, right this time (d/dx x^-1/2 = -x^-3/2 / 2, through the approximation).
#include <stdint.h>
double __enzyme_autodiff(void *, ...);

float Q_rsqrt(float number) {
  int32_t i;
  float x2, y;
  const float threehalfs = 1.5F;
  x2 = number * 0.5F;
  y = number;
  i = *(int32_t *)&y;
  i = 0x5f3759df - (i >> 1);
  y = *(float *)&i;
  y = y * (threehalfs - (x2 * y * y));
  return y;
}

void aug_rsqrt(float x) {}

float rev_rsqrt(float x, float grad_out) { return -grad_out * Q_rsqrt(x) / (2 * x); }

void *__enzyme_register_gradient_rsqrt[3] = {(void *)Q_rsqrt, (void *)aug_rsqrt,
                                             (void *)rev_rsqrt};

double invmag(double *A, int n) {
  double sumsq = 0;
  for (int i = 0; i < n; i++)
    sumsq += A[i] * A[i];
  return Q_rsqrt(sumsq);
}

int main(void) {
  double A[3] = {1, 2, 3}, dA[3] = {0};
  __enzyme_autodiff((void *)invmag, A, dA, 3);
  return 0;
}
