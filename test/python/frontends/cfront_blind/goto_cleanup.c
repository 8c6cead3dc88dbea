// A loss that bails out to one cleanup label when an input is invalid,
// the C error-handling idiom (`goto out`): scratch memory is freed on
// every path, and a negative weight leaves the loss at what it was.
#include <stdio.h>
#include <stdlib.h>

double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

double guarded_loss(double *x, double *w, int n) {
  double loss = 0.0;
  double *tmp = (double *)malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    if (w[i] < 0.0)
      goto out;
    tmp[i] = w[i] * x[i];
  }
  for (int i = 0; i < n; i++)
    loss += tmp[i] * tmp[i];
  loss = 0.5 * loss;
out:
  free(tmp);
  return loss;
}

int main(void) {
  double x[4] = {1.0, -2.0, 0.5, 3.0};
  double dx[4] = {0};
  double w[4] = {0.5, 1.5, 2.0, 1.0};
  __enzyme_autodiff((void *)guarded_loss, enzyme_dup, x, dx, enzyme_const, w,
                    enzyme_const, 4);
  for (int i = 0; i < 4; i++)
    printf("dx[%d] = %f\n", i, dx[i]);
  return 0;
}
