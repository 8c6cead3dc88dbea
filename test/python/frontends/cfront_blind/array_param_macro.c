// Fixed-size array parameters declared with a macro size, a two-argument
// function of two arrays, and an in-place update.
#include <stdio.h>

#define DIM 3

double __enzyme_autodiff(void *, ...);

double cross_norm2(double a[DIM], double b[DIM]) {
  double c[DIM];
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
  return c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
}

int main(void) {
  double a[DIM] = {1.0, 2.0, 3.0}, da[DIM] = {0};
  double b[DIM] = {-1.0, 0.5, 2.0}, db[DIM] = {0};
  __enzyme_autodiff((void *)cross_norm2, a, da, b, db);
  printf("da = %f %f %f\n", da[0], da[1], da[2]);
  printf("db = %f %f %f\n", db[0], db[1], db[2]);
  return 0;
}
