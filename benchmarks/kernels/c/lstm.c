// lstm: T steps of an LSTM cell (batch B, input I, hidden H), loss 0.5 sum h^2;
// the C twin of ../small/lstm.mlir. Hs/Cs hold the states of every step (row 0: initial).
#ifndef T
#define T 3
#endif
#ifndef B
#define B 1
#endif
#ifndef I
#define I 2
#endif
#ifndef H
#define H 3
#endif
#include <math.h>

double lstm(double X[T][B][I], double W[4 * H][I], double U[4 * H][H], double bias[4 * H],
            double Hs[T + 1][B][H], double Cs[T + 1][B][H]) {
  double loss = 0.0;
  for (int t = 0; t < T; t++) {
    int t1 = t + 1;
    for (int b = 0; b < B; b++)
      for (int j = 0; j < H; j++) {
        int r1 = j + H, r2 = j + 2 * H, r3 = j + 3 * H;  // rows of the f, o, g gates
        double s0 = bias[j], s1 = bias[r1], s2 = bias[r2], s3 = bias[r3];
        for (int i = 0; i < I; i++) {
          double x = X[t][b][i];
          s0 += W[j][i] * x;
          s1 += W[r1][i] * x;
          s2 += W[r2][i] * x;
          s3 += W[r3][i] * x;
        }
        for (int m = 0; m < H; m++) {
          double hp = Hs[t][b][m];
          s0 += U[j][m] * hp;
          s1 += U[r1][m] * hp;
          s2 += U[r2][m] * hp;
          s3 += U[r3][m] * hp;
        }
        double ig = 1.0 / (1.0 + exp(-s0));
        double fg = 1.0 / (1.0 + exp(-s1));
        double og = 1.0 / (1.0 + exp(-s2));
        double g = tanh(s3);
        double c = fg * Cs[t][b][j] + ig * g;
        Cs[t1][b][j] = c;
        double h = og * tanh(c);
        Hs[t1][b][j] = h;
        loss += 0.5 * (h * h);
      }
  }
  return loss;
}

void lstm_enzyme(double *X, double *dX, double *W, double *dW, double *U, double *dU,
                 double *bias, double *dbias, double *Hs, double *dHs, double *Cs, double *dCs) {
  __enzyme_autodiff((void *)lstm, enzyme_dup, X, dX, enzyme_dup, W, dW, enzyme_dup, U, dU,
                    enzyme_dup, bias, dbias, enzyme_dup, Hs, dHs, enzyme_dup, Cs, dCs);
}
