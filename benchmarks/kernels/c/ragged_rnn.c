// ragged_rnn: a scalar RNN over sequences of different lengths (bounds loaded from lens);
// the C twin of ../small/ragged_rnn.mlir.
#ifndef B
#define B 3
#endif
#ifndef L
#define L 4
#endif
#include <math.h>

double ragged_rnn(double X[B][L], double h0[B], double w[2], const int lens[B]) {
  double wa = w[0], wb = w[1];
  double loss = 0.0;
  for (int b = 0; b < B; b++) {
    double h = h0[b];
    for (int t = 0; t < lens[b]; t++)
      h = tanh(wa * h + wb * X[b][t]);
    loss += h * h;
  }
  return loss;
}

void ragged_rnn_enzyme(double *X, double *dX, double *h0, double *dh0, double *w, double *dw,
                       int *lens) {
  __enzyme_autodiff((void *)ragged_rnn, enzyme_dup, X, dX, enzyme_dup, h0, dh0, enzyme_dup, w,
                    dw, enzyme_const, lens);
}
