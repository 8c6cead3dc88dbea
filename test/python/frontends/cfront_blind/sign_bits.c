// Reads the sign bit of each value through a union of a double and a
// uint64_t, and uses it to pick a per-sign weight.
#include <stdint.h>
#include <stdio.h>

int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

double signed_energy(double *x, int n) {
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    union { double d; uint64_t u; } v;
    v.d = x[i];
    double weight = (v.u >> 63) ? 3.0 : 1.0;
    e += weight * v.d * v.d;
  }
  return e;
}

int main(void) {
  double x[5] = {0.5, -1.0, 2.0, -0.25, 1.5};
  double dx[5] = {0};
  __enzyme_autodiff((void *)signed_energy, enzyme_dup, x, dx, enzyme_const, 5);
  for (int i = 0; i < 5; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
