// fft: an in-place radix-2 FFT followed by the inverse FFT (Molteno's "classy FFT", with
// its recursion commented out), from gem5-SALAM's AD suite (not in their result CSVs).
// Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/fft/hw/fft.c at commit
// 5f64bd1b7cdb0341ad88a89a223ed6d9fb912ab5 (`foobar`: fft then ifft of `data`, handed to
// __enzyme_autodiff as enzyme_dupnoneed with its shadow set to 1.0, len 32), with
// benchmarks/AD/fft/hw/fft.h at commit 7605f12c9592939f75fb7b2dbc477fd6ca695162.
// Their recursiveApply has both recursive calls commented out, so at level N it runs the
// same butterfly loop twice on data[0 .. 2N) and returns; scramble is the bit-reversal
// permutation; ifft also rescales by 1/N. sin is their own Taylor series (fft.h defines
// `double sin(double)` with a while loop to 1e-8), here fft_sin.
// Size: LEN = 32 complex values (64 doubles, 512 bytes).
// Same loops, arithmetic and types. Differs:
// - `swap(&data[j-1], &data[i-1])` (pointers to elements) is written out as two swaps of
//   array elements through a temporary (the C subset has no `&`);
// - `len` and the helpers' `unsigned N` are the macro LEN (their constant 32), so the
//   helpers' loops have constant trip counts as theirs after inlining; iSign stays an
//   argument; their sin is named fft_sin (a file function, not <math.h>'s);
// - theirs seeds the output's shadow with 1.0 (enzyme_dupnoneed); ours returns loss = sum
//   of data after fft and ifft, the same seed.
// The transform is linear in data, so the AD caches nothing.
#include <math.h>
#ifndef LEN
#define LEN 32
#endif
#define PI 3.14159265358979323846

double fft_sin(double x) {
  int i = 1;
  double cur = x;
  double acc = 1;
  double fact = 1;
  double pow = x;
  while (fabs(acc) > .00000001 && i < 100) {
    fact *= ((2 * i) * (2 * i + 1));
    pow *= -1 * x * x;
    acc = pow / fact;
    cur += acc;
    i++;
  }
  return cur;
}

void recursiveApply(double data[2 * LEN], int iSign) {
  for (int pass = 0; pass < 2; pass++) { // their two copies of the same block
    double wtemp = iSign * fft_sin(PI / LEN);
    double wpi = -iSign * fft_sin(2 * PI / LEN);
    double wpr = -2.0 * wtemp * wtemp;
    double wr = 1.0;
    double wi = 0.0;
    for (int i = 0; i < LEN; i += 2) {
      int iN = i + LEN;
      double tempr = data[iN] * wr - data[iN + 1] * wi;
      double tempi = data[iN] * wi + data[iN + 1] * wr;
      data[iN] = data[i] - tempr;
      data[iN + 1] = data[i + 1] - tempi;
      data[i] += tempr;
      data[i + 1] += tempi;
      wtemp = wr;
      wr += wr * wpr - wi * wpi;
      wi += wi * wpr + wtemp * wpi;
    }
  }
}

void scramble(double data[2 * LEN]) {
  int j = 1;
  for (int i = 1; i < 2 * LEN; i += 2) {
    if (j > i) {
      double t0 = data[j - 1];
      data[j - 1] = data[i - 1];
      data[i - 1] = t0;
      double t1 = data[j];
      data[j] = data[i];
      data[i] = t1;
    }
    int m = LEN;
    while (m >= 2 && j > m) {
      j -= m;
      m >>= 1;
    }
    j += m;
  }
}

void rescale(double data[2 * LEN]) {
  double scale = ((double)1) / LEN;
  for (int i = 0; i < 2 * LEN; i++) {
    data[i] *= scale;
  }
}

double foobar(double data[2 * LEN]) {
  scramble(data); // fft
  recursiveApply(data, 1);
  scramble(data); // ifft
  recursiveApply(data, -1);
  rescale(data);
  double loss = 0.0;
  for (int i = 0; i < 2 * LEN; i++)
    loss += data[i];
  return loss;
}

void fft_enzyme(double *data, double *ddata) {
  __enzyme_autodiff((void *)foobar, enzyme_dup, data, ddata);
}
