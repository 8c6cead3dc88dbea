// One dense layer with ReLU and a squared-sum loss; weights in a malloc'ed
// row-major buffer, the input constant, the loss through a pointer.
#include <stdio.h>
#include <stdlib.h>

int enzyme_dup, enzyme_const, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);

#define IN 3
#define OUT 2

void layer_loss(const double *W, const double *b, const double *x,
                double *loss) {
  double total = 0.0;
  for (int o = 0; o < OUT; o++) {
    double a = b[o];
    for (int i = 0; i < IN; i++)
      a += W[o * IN + i] * x[i];
    double h = a > 0.0 ? a : 0.0;
    total += h * h;
  }
  *loss = total;
}

int main(void) {
  double *W = malloc(OUT * IN * sizeof(double));
  double *dW = calloc(OUT * IN, sizeof(double));
  double b[OUT] = {0.9, -1.0};
  double db[OUT] = {0.0, 0.0};
  double x[IN] = {1.0, 2.0, -1.0};
  for (int k = 0; k < OUT * IN; k++)
    W[k] = 0.2 * k - 0.3;
  double loss = 0.0, dloss = 1.0;
  __enzyme_autodiff((void *)layer_loss, enzyme_dup, W, dW, enzyme_dup, b, db,
                    enzyme_const, x, enzyme_dupnoneed, &loss, &dloss);
  for (int k = 0; k < OUT * IN; k++)
    printf("dW[%d] = %f\n", k, dW[k]);
  printf("db = %f %f\n", db[0], db[1]);
  free(W);
  free(dW);
  return 0;
}
