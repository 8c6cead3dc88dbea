// Mean squared error written to an output pointer; the loss is passed as
// enzyme_dupnoneed with a seed of 1, the targets are constant.
#include <stdio.h>
#include <enzyme/enzyme.h>

void mse(const double *pred, const double *target, int n, double *loss) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double e = pred[i] - target[i];
    s += e * e;
  }
  *loss = s / n;
}

int main(void) {
  double pred[4] = {0.1, 0.7, -0.3, 1.2};
  double target[4] = {0.0, 1.0, 0.0, 1.0};
  double d_pred[4] = {0.0, 0.0, 0.0, 0.0};
  double loss = 0.0, d_loss = 1.0;
  __enzyme_autodiff((void *)mse, enzyme_dup, pred, d_pred, enzyme_const,
                    target, enzyme_const, 4, enzyme_dupnoneed, &loss, &d_loss);
  for (int i = 0; i < 4; i++)
    printf("d_pred[%d] = %f\n", i, d_pred[i]);
  return 0;
}
