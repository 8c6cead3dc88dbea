// nn: one-layer MNIST classifier, softmax cross-entropy of one image, from gem5-SALAM's AD
// suite. Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/nn/hw/nn.c at commit
// d68b91f1b321a9abef11c526cdb8f68ba64d4628 (`neural_network_hypothesis_v2`, handed to
// __enzyme_autodiff with the image enzyme_const, the network and its shadow, label 1).
//   act[i] = b[i] + sum_j W[i][j] * pixels[j] / 255;  loss = -log(softmax(act)[label])
// Sizes: 10 labels x 784 (28 x 28) pixels, doubles; network 62,720 + 80 bytes, image
// 6,272 bytes. Same loops, types and sizes (their softmax helper is a function of the file
// here too), and the image enzyme_const as theirs: the gradient is the specialization
// `hypothesis_cdd_grad` (no shadow of the pixels, no d pixels accumulated). Differs:
// - the network struct {b[10], W[10][784]} is passed as two arrays b and W, the image
//   struct as its pixel array (the C subset has no structs yet);
// - their label is the constant 1 passed as an argument; here the macro LABEL (1);
// - their `activations` is malloc'd and `activations2` is a fixed address; here both are
//   local arrays; `for (i = 1, max = a[0]; ...)` is split into two statements;
//   PIXEL_SCALE's 255.0f is the double 255.0 (the same value).
#include <math.h>
#ifndef LABELS
#define LABELS 10
#endif
#ifndef PIXELS
#define PIXELS 784
#endif
#define LABEL 1

void softmax_v2(double activations[LABELS], double outp[LABELS]) {
  double max = activations[0];
  for (int i = 1; i < LABELS; i++) {
    if (activations[i] > max) {
      max = activations[i];
    }
  }
  double sum = 0;
  for (int i = 0; i < LABELS; i++) {
    sum += exp(activations[i] - max);
  }
  for (int i = 0; i < LABELS; i++) {
    outp[i] = exp(activations[i] - max) / sum;
  }
}

double hypothesis(double pixels[PIXELS], double b[LABELS], double W[LABELS][PIXELS]) {
  double activations[LABELS];
  for (int i = 0; i < LABELS; i++) {
    activations[i] = b[i];
    for (int j = 0; j < PIXELS; j++) {
      activations[i] += W[i][j] * (pixels[j] / 255.0);
    }
  }
  double activations2[LABELS];
  softmax_v2(activations, activations2);
  return -log(activations2[LABEL]);
}

void nn_enzyme(double *pixels, double *b, double *db, double *W, double *dW) {
  __enzyme_autodiff((void *)hypothesis, enzyme_const, pixels, enzyme_dup, b, db, enzyme_dup,
                    W, dW);
}
