// mass_spring: one step of a spring-mass robot driven by a tanh network controller
// (DiffTaichi's mass_spring), from gem5-SALAM's AD suite. Theirs: sfu-arch/gem5-SALAM,
// benchmarks/AD/mass_spring/hw/mass_spring.c at commit
// 116da467750395dccb384f853d240021eaf05c1f (`mass_spring`, handed to __enzyme_autodiff
// with its eleven arrays and their shadows).
//   hidden = tanh(W1 [sin waves; x; v] + b1)   (nn1, N hidden units)
//   act    = tanh(W2 hidden + b2)              (nn2, one per spring)
//   v_inc[a] -= impulse, v_inc[b] += impulse   (ApplyForce, spring i joins a = i, b = 2i)
// Sizes: 16 springs, 32 objects, 16 sine waves, N = 32 hidden units (their Makefile's
// N ?= 32 sets n_hidden; the file's own default is 16). Not the bundled mass_spring.
// Same loops, index expressions, types and sizes. Differs:
// - their nn1 reads x[j+1] for j < 32 and v[j*32] and v[j*32+1] from 32-element arrays,
//   past their ends; here x has the 33 and v the 994 entries the loops read;
// - theirs returns nothing (the gradient is seeded through the shadows of the outputs);
//   ours returns loss = sum of v_inc[i]^2 after the step (sum(v_inc) would not do: each
//   impulse is added once and subtracted once);
// - `size_t` loop counters are `long` (the same 64-bit index here) and the
//   always_inline helpers are functions of the file (calls); `constexpr int` sizes are
//   macros; the unroll pragmas are theirs, UNROLL_COUNT their Makefile's default at
//   1226dca (32; 1 at 116da46), not a size;
// - their sqrt(x[a]*x[b] + x[a]*x[b]) is NaN where x[a]*x[b] < 0; the manifest's positions
//   are positive.
#include <math.h>
#ifndef N
#define N 32
#endif
#ifndef N_SPRINGS
#define N_SPRINGS 16
#endif
#ifndef N_SIN_WAVES
#define N_SIN_WAVES 16
#endif
#if !defined(UNROLL_COUNT)
#define UNROLL_COUNT 32
#endif
#define N_OBJECTS (2 * N_SPRINGS)
#define N_HIDDEN N
#define W1_SIZE (N_HIDDEN * (N_SIN_WAVES + N_OBJECTS * 4 + 2))
#define X_SIZE (N_OBJECTS + 1)
#define V_SIZE ((N_OBJECTS - 1) * N_OBJECTS + 2)

void nn1(double x[X_SIZE], double v[V_SIZE], double bias1[N_HIDDEN], double weights1[W1_SIZE],
         double hidden[N_HIDDEN]) {
  for (long i = 0; i < N_HIDDEN; i++) {
    hidden[i] = 0;
#pragma clang loop unroll_count(UNROLL_COUNT)
    for (long j = 0; j < N_SIN_WAVES; ++j) {
      double weights_i_j = weights1[j];
      hidden[i] += weights_i_j * sin(1 / (j + 1));
    }
#pragma clang loop unroll_count(UNROLL_COUNT)
    for (long j = 0; j < N_OBJECTS; ++j) {
      hidden[i] += weights1[i * N_SIN_WAVES + j * 4 + N_SIN_WAVES] * x[j] * 0.05;
      hidden[i] += weights1[i * N_SIN_WAVES + j * 4 + N_SIN_WAVES + 1] * x[j + 1] * 0.05;
      hidden[i] += weights1[i * N_SIN_WAVES + j * 4 + N_SIN_WAVES + 2] * v[j * N_OBJECTS] * 0.05;
      hidden[i] += weights1[i * N_SIN_WAVES + j * 4 + N_SIN_WAVES + 3] * v[j * N_OBJECTS + 1] * 0.05;
    }
    hidden[i] += weights1[i * N_SIN_WAVES + N_OBJECTS * 4 + N_SIN_WAVES];
    hidden[i] += weights1[i * N_SIN_WAVES + N_OBJECTS * 4 + N_SIN_WAVES + 1];
    hidden[i] += bias1[i];
    hidden[i] = tanh(hidden[i]);
  }
}

void nn2(double weights2[N_SPRINGS * N_HIDDEN], double bias2[N_SPRINGS], double hidden[N_HIDDEN],
         double act[N_SPRINGS]) {
  for (long i = 0; i < N_SPRINGS; ++i) {
    double actuation = 0;
#pragma clang loop unroll_count(UNROLL_COUNT)
    for (long j = 0; j < N_HIDDEN; ++j) {
      actuation += weights2[i * N_HIDDEN + j] * hidden[j];
    }
    actuation += bias2[i];
    actuation = tanh(actuation);
    act[i] = actuation;
  }
}

void ApplyForce(double x[X_SIZE], double act[N_SPRINGS], double spring_length[N_SPRINGS],
                double spring_actuation[N_SPRINGS], double v_inc[N_OBJECTS]) {
  for (long i = 0; i < N_SPRINGS; i++) {
    int a = i;
    int b = 2 * i;
    double dist = x[b] - x[a];
    double length = sqrt(x[a] * x[b] + x[a] * x[b]) + 0.0001;
    double target_length = spring_length[i] * (1 + act[i] * spring_actuation[i]);
    double impulse = (length - target_length) / length * dist;
    v_inc[a] -= impulse;
    v_inc[b] += impulse;
  }
}

double mass_spring(double x[X_SIZE], double v[V_SIZE], double bias1[N_HIDDEN],
                   double hidden[N_HIDDEN], double act[N_SPRINGS], double weights1[W1_SIZE],
                   double weights2[N_SPRINGS * N_HIDDEN], double bias2[N_SPRINGS],
                   double spring_lengths[N_SPRINGS], double spring_actuation[N_SPRINGS],
                   double v_inc[N_OBJECTS]) {
  nn1(x, v, bias1, weights1, hidden);
  nn2(weights2, bias2, hidden, act);
  ApplyForce(x, act, spring_lengths, spring_actuation, v_inc);
  double loss = 0.0;
  for (long i = 0; i < N_OBJECTS; i++)
    loss += v_inc[i] * v_inc[i];
  return loss;
}

void mass_spring_enzyme(double *x, double *dx, double *v, double *dv, double *bias1,
                        double *dbias1, double *hidden, double *dhidden, double *act,
                        double *dact, double *weights1, double *dweights1, double *weights2,
                        double *dweights2, double *bias2, double *dbias2, double *lengths,
                        double *dlengths, double *actuation, double *dactuation, double *v_inc,
                        double *dv_inc) {
  __enzyme_autodiff((void *)mass_spring, enzyme_dup, x, dx, enzyme_dup, v, dv, enzyme_dup,
                    bias1, dbias1, enzyme_dup, hidden, dhidden, enzyme_dup, act, dact,
                    enzyme_dup, weights1, dweights1, enzyme_dup, weights2, dweights2,
                    enzyme_dup, bias2, dbias2, enzyme_dup, lengths, dlengths, enzyme_dup,
                    actuation, dactuation, enzyme_dup, v_inc, dv_inc);
}
