// Sum of an array times a factor; default activities: the pointer is
// duplicated (shadow follows it), size_t is inactive, the double is active.
#include <stdio.h>
#include <stddef.h>

extern double __enzyme_autodiff(void *, ...);

double sum_mul(double *values, size_t len, double factor) {
  double total = 0;
  for (int i = 0; i < len; i++) {
    total += values[i];
  }
  return total * factor;
}

int main(void) {
  double values[5] = {1.0, -2.0, 0.5, 4.0, 3.0};
  double d_values[5] = {0.0};
  double factor = 1.5;
  double d_factor = __enzyme_autodiff((void *)sum_mul, values, d_values,
                                      (size_t)5, factor);
  for (int i = 0; i < 5; i++)
    printf("d_values[%d] = %f\n", i, d_values[i]);
  printf("d_factor = %f\n", d_factor);
  return 0;
}
