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
  for (int t = 0; t < T; t++)
    for (int b = 0; b < B; b++)
      for (int j = 0; j < H; j++) {
        double s0 = bias[j], s1 = bias[j + H], s2 = bias[j + 2 * H], s3 = bias[j + 3 * H];
        for (int i = 0; i < I; i++) {
          double x = X[t][b][i];
          s0 += W[j][i] * x;
          s1 += W[j + H][i] * x;
          s2 += W[j + 2 * H][i] * x;
          s3 += W[j + 3 * H][i] * x;
        }
        for (int m = 0; m < H; m++) {
          double hp = Hs[t][b][m];
          s0 += U[j][m] * hp;
          s1 += U[j + H][m] * hp;
          s2 += U[j + 2 * H][m] * hp;
          s3 += U[j + 3 * H][m] * hp;
        }
        double ig = 1.0 / (1.0 + exp(-s0));
        double fg = 1.0 / (1.0 + exp(-s1));
        double og = 1.0 / (1.0 + exp(-s2));
        double g = tanh(s3);
        double c = fg * Cs[t][b][j] + ig * g;
        Cs[t + 1][b][j] = c;
        double h = og * tanh(c);
        Hs[t + 1][b][j] = h;
        loss += 0.5 * (h * h);
      }
  return loss;
}
