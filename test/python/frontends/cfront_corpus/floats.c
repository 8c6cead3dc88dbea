// Single precision, a float-returning loss with fabsf and a clamp.
#include <math.h>
#include <stdio.h>

extern int enzyme_dup, enzyme_const;
float __enzyme_autodiff(void *, ...);

float huber(const float *r, int n, float delta) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) {
    float a = fabsf(r[i]);
    s += a <= delta ? 0.5f * a * a : delta * (a - 0.5f * delta);
  }
  return s / n;
}

int main() {
  float r[4] = {0.1f, -2.0f, 0.5f, 3.0f}, dr[4] = {0};
  float dd = __enzyme_autodiff((void *)huber, enzyme_dup, r, dr, enzyme_const, 4, 1.0f);
  printf("%f %f %f %f %f\n", dr[0], dr[1], dr[2], dr[3], dd);
}
