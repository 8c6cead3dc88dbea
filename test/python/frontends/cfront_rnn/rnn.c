// An RNN whose state buffer h[(T+1)*H] is indexed through pointer offsets (issue 23:
// refused as pointer arithmetic, and once rewritten its tape was 5x its MLIR twin's).
// Its MLIR twin, rnn.mlir, indexes h[t*H + j] and h[(t+1)*H + i] directly.
#include <enzyme/enzyme.h>
#include <math.h>
#define T 4
#define H 3

double rnn(const double *W, const double *U, const double *x, double *h) {
  for (int t = 0; t < T; t++) {
    const double *prev = h + t * H;
    double *next = h + (t + 1) * H;
    for (int i = 0; i < H; i++) {
      double z = U[i] * x[t];
      for (int j = 0; j < H; j++)
        z += W[i * H + j] * prev[j];
      next[i] = tanh(z);
    }
  }
  double loss = 0.0;
  for (int i = 0; i < H; i++)
    loss += h[T * H + i] * h[T * H + i];
  return loss;
}

void grad(double *W, double *dW, double *U, double *dU, double *x, double *dx, double *h,
          double *dh) {
  __enzyme_autodiff((void *)rnn, W, dW, U, dU, x, dx, h, dh);
}
