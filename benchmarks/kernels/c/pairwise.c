// pairwise: sum over pairs of 1/sqrt(|pi - pj|^2 + eps); the C twin of ../small/pairwise.mlir.
#ifndef N
#define N 6
#endif
#include <math.h>

double pairwise(double P[N][3]) {
  double loss = 0.0;
  for (int i = 0; i < N; i++) {
    double xi = P[i][0], yi = P[i][1], zi = P[i][2];
    for (int j = i + 1; j < N; j++) {
      double dx = xi - P[j][0], dy = yi - P[j][1], dz = zi - P[j][2];
      double d2 = dx * dx + dy * dy + dz * dz + 0.01;
      loss += 1.0 / sqrt(d2);
    }
  }
  return loss;
}

void pairwise_enzyme(double *P, double *dP) {
  __enzyme_autodiff((void *)pairwise, enzyme_dup, P, dP);
}
