// conv2d: 3x3 valid convolution, leaky ReLU, sum of squares; the C twin of ../small/conv2d.mlir.
#ifndef CI
#define CI 2
#endif
#ifndef CO
#define CO 2
#endif
#ifndef H
#define H 4
#endif
#ifndef W
#define W 4
#endif

double conv2d(double X[CI][H][W], double K[CO][CI][3][3], double bias[CO]) {
  double loss = 0.0;
  for (int co = 0; co < CO; co++) {
    double bv = bias[co];
    for (int i = 0; i < H - 2; i++)
      for (int j = 0; j < W - 2; j++) {
        double acc = bv;
        for (int ci = 0; ci < CI; ci++)
          for (int ki = 0; ki < 3; ki++)
            for (int kj = 0; kj < 3; kj++)
              acc += X[ci][i + ki][j + kj] * K[co][ci][ki][kj];
        double act = acc > 0.0 ? acc : 0.01 * acc;
        loss += act * act;
      }
  }
  return loss;
}

void conv2d_enzyme(double *X, double *dX, double *K, double *dK, double *bias, double *dbias) {
  __enzyme_autodiff((void *)conv2d, enzyme_dup, X, dX, enzyme_dup, K, dK, enzyme_dup, bias,
                    dbias);
}
