// A one-hidden-layer network with fixed (const global) output weights; the gradient with
// respect to the first layer's weights.
#include <math.h>
#include <stdio.h>
#include <enzyme/enzyme.h>

#define IN 3
#define HID 4

const double w2[HID] = {0.5, -0.25, 0.75, 1.0};

static double sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }

double predict(const double *w1, const double *x, double target) {
  double out = 0.0;
  for (int h = 0; h < HID; h++) {
    double z = 0.0;
    for (int i = 0; i < IN; i++)
      z += w1[h * IN + i] * x[i];
    out += w2[h] * sigmoid(z);
  }
  double err = out - target;
  return err * err;
}

int main() {
  double w1[HID * IN], dw1[HID * IN] = {0};
  for (int k = 0; k < HID * IN; k++) w1[k] = 0.1 * k - 0.5;
  double x[IN] = {1.0, 2.0, -1.0};
  __enzyme_autodiff((void *)predict, enzyme_dup, w1, dw1, enzyme_const, x, enzyme_const, 0.3);
  for (int k = 0; k < HID * IN; k++) printf("%f\n", dw1[k]);
}
