// mlp: one tanh hidden layer, squared error; the C twin of ../small/mlp.mlir.
// Hs is scratch: the hidden activations, kept in memory as the MLIR kernel does.
#ifndef B
#define B 3
#endif
#ifndef D
#define D 4
#endif
#ifndef H
#define H 5
#endif
#ifndef O
#define O 2
#endif
#include <math.h>

double mlp(double X[B][D], double W1[D][H], double b1[H], double W2[H][O], double b2[O],
           double Y[B][O], double Hs[B][H]) {
  double loss = 0.0;
  for (int b = 0; b < B; b++) {
    for (int h = 0; h < H; h++) {
      double z = b1[h];
      for (int d = 0; d < D; d++)
        z += X[b][d] * W1[d][h];
      Hs[b][h] = tanh(z);
    }
    for (int o = 0; o < O; o++) {
      double y = b2[o];
      for (int h = 0; h < H; h++)
        y += Hs[b][h] * W2[h][o];
      double e = y - Y[b][o];
      loss += 0.5 * (e * e);
    }
  }
  return loss;
}

void mlp_enzyme(double *X, double *dX, double *W1, double *dW1, double *b1, double *db1,
                double *W2, double *dW2, double *b2, double *db2, double *Y, double *dY,
                double *Hs, double *dHs) {
  __enzyme_autodiff((void *)mlp, enzyme_dup, X, dX, enzyme_dup, W1, dW1, enzyme_dup, b1, db1,
                    enzyme_dup, W2, dW2, enzyme_dup, b2, db2, enzyme_dup, Y, dY, enzyme_dup,
                    Hs, dHs);
}
