// lenet: LeNet-shaped conv (matmul) + sum-pool layers and two dense layers, from
// gem5-SALAM's AD suite (not in their result CSVs; its files are named alexnet).
// Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/lenet/hw/alexnet.c at commit
// e7fae7759f8ba4aea3cac2104bc0b6fdc55c9890 (`neural_network_hypothesis_v2`, handed to
// __enzyme_autodiff with the image enzyme_const and the weights and their shadow), with
// the helpers and sizes of benchmarks/AD/lenet/hw/alexnet.h at commit
// 1226dca1c444af949593b30ed2f400169b440b00.
//   conv(in, w1, f, w2, out): out[i*w2 + j] = sum_{k < w1} in[i*w1 + k] * f[k*w2 + j]
//   pool(in, w, p, out):      out[i*w + j] = sum_{k, l < p} in[(i*p + k)*w + j*p + l]
//   dense(in, n, wt, m, out): out[i] = sum_{j < n} in[j] * wt[i]
// Layer 1 runs conv + pool for each of 6 filters; then conv + pool, conv, dense, dense.
// Sizes: the header's (5 x 5 filters, 6 / 16 / 120 filters, conv outputs 28 and 10, pool 2,
// pool outputs 14 and 5, dense 84 and 10); the image width is their Makefile's N ?= 1 (the
// header's fallback of 32, behind a bare `#elif`, never applies): -DIMG=32 gives LeNet's.
// Same loops, trip counts, offsets and types: their image, weights struct and buffers lie
// in one memory region (the weights right after sizeof(weights) bytes of image, the
// buffers right after the weights), and here they are one array M with the same offsets,
// so the loops that read past their slices (layer 1's filters and pool windows) read what
// theirs reads, and the AD, like theirs, assumes a store may overwrite what others read.
// Differs: pointer arguments are offsets into M (no pointer arithmetic in the C subset);
// their always_inline helpers are written out at each call; the image is enzyme_dup
// (TapeFlow gives every float array a shadow); their unused num_layers and label are
// dropped; theirs returns nothing, ours returns loss = sum of layer 5's outputs.
#ifndef IMG
#define IMG 1
#endif
#ifndef FW
#define FW 5
#endif
#ifndef FC1
#define FC1 6
#endif
#ifndef CW1
#define CW1 28
#endif
#ifndef PW
#define PW 2
#endif
#ifndef OW1
#define OW1 14
#endif
#ifndef FC2
#define FC2 16
#endif
#ifndef CW2
#define CW2 10
#endif
#ifndef OW2
#define OW2 5
#endif
#ifndef FC3
#define FC3 120
#endif
#ifndef D4
#define D4 84
#endif
#ifndef D5
#define D5 10
#endif
#define MAX(a, b) ((a) > (b) ? (a) : (b))
// the weights struct: layer1 .. layer5
#define NET_SIZE (FC1 * FW * FW + FC2 * FW * FW + FC3 * FW * FW + D4 + D5)
#define O_IMG 0
#define O_NET NET_SIZE // their top(): the weights start sizeof(weights) bytes after x
#define O_W1 O_NET
#define O_W2 (O_W1 + FC1 * FW * FW)
#define O_W3 (O_W2 + FC2 * FW * FW)
#define O_W4 (O_W3 + FC3 * FW * FW)
#define O_W5 (O_W4 + D4)
#define O_CONV (O_NET + NET_SIZE)
#define O_L1 (O_CONV + FC1 * CW1 * CW1)
#define O_C2 (O_L1 + FC1 * CW1 * CW1)
#define O_L2 (O_C2 + FC2 * CW2 * CW2)
#define O_L3 (O_L2 + FC2 * OW2 * OW2)
#define O_L4 (O_L3 + FC3)
#define O_L5 (O_L4 + D4)
// the farthest read: the last filter's pool window, past the conv buffer
#define POOL1_END (O_CONV + (FC1 - 1) * CW1 * CW1 + (CW1 * PW - 1) * CW1 + CW1 * PW)
#define M_SIZE MAX(O_L5 + D5, POOL1_END)

double hypothesis(double M[M_SIZE]) {
  // their always_inline helpers conv, pool and dense, inlined with their arguments
  for (int f = 0; f < FC1; f++) {
    // layer 1, filter f: conv(O_IMG, IMG, O_W1 + f * FW * FW, FW, O_CONV + f * CW1 * CW1)
    for (int i = 0; i < IMG; i++) {
      for (int j = 0; j < FW; j++) {
        M[O_CONV + f * CW1 * CW1 + i * FW + j] = 0;
        for (int k = 0; k < IMG; k++) {
          M[O_CONV + f * CW1 * CW1 + i * FW + j] += M[O_IMG + i * IMG + k] * M[O_W1 + f * FW * FW + k * FW + j];
        }
      }
    }
    // layer 1, filter f: pool(O_CONV + f * CW1 * CW1, CW1, PW, O_L1 + f * OW1 * OW1)
    for (int i = 0; i < CW1; i += 1) {
      for (int j = 0; j < CW1; j += 1) {
        M[O_L1 + f * OW1 * OW1 + i * CW1 + j] = 0;
        for (int k = 0; k < PW; k++) {
          int mat_row = i * PW + k;
          for (int l = 0; l < PW; l++) {
            int mat_col = j * PW + l;
            M[O_L1 + f * OW1 * OW1 + i * CW1 + j] += M[O_CONV + f * CW1 * CW1 + mat_row * CW1 + mat_col];
          }
        }
      }
    }
  }
  // layer 2: conv(O_L1, OW1, O_W2, FW, O_C2)
  for (int i = 0; i < OW1; i++) {
    for (int j = 0; j < FW; j++) {
      M[O_C2 + i * FW + j] = 0;
      for (int k = 0; k < OW1; k++) {
        M[O_C2 + i * FW + j] += M[O_L1 + i * OW1 + k] * M[O_W2 + k * FW + j];
      }
    }
  }
  // layer 2: pool(O_C2, CW2, PW, O_L2)
  for (int i = 0; i < CW2; i += 1) {
    for (int j = 0; j < CW2; j += 1) {
      M[O_L2 + i * CW2 + j] = 0;
      for (int k = 0; k < PW; k++) {
        int mat_row = i * PW + k;
        for (int l = 0; l < PW; l++) {
          int mat_col = j * PW + l;
          M[O_L2 + i * CW2 + j] += M[O_C2 + mat_row * CW2 + mat_col];
        }
      }
    }
  }
  // layer 3: conv(O_L2, OW2, O_W3, FW, O_L3)
  for (int i = 0; i < OW2; i++) {
    for (int j = 0; j < FW; j++) {
      M[O_L3 + i * FW + j] = 0;
      for (int k = 0; k < OW2; k++) {
        M[O_L3 + i * FW + j] += M[O_L2 + i * OW2 + k] * M[O_W3 + k * FW + j];
      }
    }
  }
  // layer 4: dense(O_L3, FC3, O_W4, D4, O_L4)
  for (int i = 0; i < D4; i++) {
    double tmp = 0;
    for (int j = 0; j < FC3; j++) {
      tmp += M[O_L3 + j] * M[O_W4 + i];
    }
    M[O_L4 + i] = tmp;
  }
  // layer 5: dense(O_L4, D4, O_W5, D5, O_L5)
  for (int i = 0; i < D5; i++) {
    double tmp = 0;
    for (int j = 0; j < D4; j++) {
      tmp += M[O_L4 + j] * M[O_W5 + i];
    }
    M[O_L5 + i] = tmp;
  }
  double loss = 0.0;
  for (int i = 0; i < D5; i++)
    loss += M[O_L5 + i];
  return loss;
}

void lenet_enzyme(double *M, double *dM) {
  __enzyme_autodiff((void *)hypothesis, enzyme_dup, M, dM);
}
