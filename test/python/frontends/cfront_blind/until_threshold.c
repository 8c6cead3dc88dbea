// Accumulate weighted squares until a running total passes a threshold:
// a data-dependent break inside a loop (the derivative follows the path).
#include <stdio.h>

extern double __enzyme_autodiff(void *, double *, double *, int);

double until_threshold(double *v, int n) {
  double acc = 0.0;
  int i = 0;
  while (i < n) {
    acc += (i + 1) * v[i] * v[i];
    if (acc > 10.0)
      break;
    i++;
  }
  return acc;
}

int main(void) {
  double v[5] = {1.0, 1.5, 0.5, 2.0, 1.0};
  double dv[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  __enzyme_autodiff((void *)until_threshold, v, dv, 5);
  for (int i = 0; i < 5; i++)
    printf("dv[%d] = %f\n", i, dv[i]);
  return 0;
}
