// Single precision: sum of squares of floats.
#include <stdio.h>

extern void __enzyme_autodiff(void *, float *, float *, int);

float sumsq(float *v, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s += v[i] * v[i];
  return s;
}

int main(void) {
  float v[4] = {1.0f, 2.0f, -0.5f, 3.0f};
  float dv[4] = {0.0f};
  __enzyme_autodiff((void *)sumsq, v, dv, 4);
  for (int i = 0; i < 4; i++)
    printf("dv[%d] = %f\n", i, dv[i]);
  return 0;
}
