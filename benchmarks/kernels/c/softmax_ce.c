// softmax_ce: softmax cross-entropy with integer labels; the C twin of ../small/softmax_ce.mlir.
#ifndef B
#define B 4
#endif
#ifndef C
#define C 5
#endif
#include <math.h>

double softmax_ce(double Z[B][C], const int labels[B]) {
  double loss = 0.0;
  for (int b = 0; b < B; b++) {
    double m = Z[b][0];
    for (int j = 1; j < C; j++) {
      double z = Z[b][j];
      m = z > m ? z : m;
    }
    double se = 0.0;
    for (int j = 0; j < C; j++)
      se += exp(Z[b][j] - m);
    loss += log(se) + m - Z[b][labels[b]];
  }
  return loss;
}

void softmax_ce_enzyme(double *Z, double *dZ, int *labels) {
  __enzyme_autodiff((void *)softmax_ce, enzyme_dup, Z, dZ, enzyme_const, labels);
}
