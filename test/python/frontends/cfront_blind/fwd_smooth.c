// Forward mode through a void function: the tangent of the output array (a Jacobian-vector
// product) lands in its shadow; the weights are constant, the output dupnoneed.
#include <math.h>
#include <stdio.h>

int enzyme_const, enzyme_dup, enzyme_dupnoneed;
void __enzyme_fwddiff(void *, ...);

void smooth(const double *w, const double *x, double *out, int n) {
  for (int i = 0; i < n; i++) {
    double left = i > 0 ? x[i - 1] : x[i];
    double right = i < n - 1 ? x[i + 1] : x[i];
    out[i] = tanh(w[0] * left + w[1] * x[i] + w[2] * right);
  }
}

int main(void) {
  double w[3] = {0.25, 0.5, 0.25};
  double x[5] = {1.0, -0.5, 2.0, 0.3, -1.2};
  double dx[5] = {1.0, 0.0, 0.0, 0.5, -1.0};
  double out[5], dout[5];
  __enzyme_fwddiff((void *)smooth, enzyme_const, w, enzyme_dup, x, dx,
                   enzyme_dupnoneed, out, dout, 5);
  for (int i = 0; i < 5; i++)
    printf("dout[%d] = %f\n", i, dout[i]);
  return 0;
}
