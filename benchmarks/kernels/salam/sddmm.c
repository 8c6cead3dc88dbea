// sddmm: sampled dense-dense matrix multiply (TACO-generated loop nest), from gem5-SALAM's
// AD suite. Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/sddmm/hw/sddmm.c at commit
// a5e40f4be5c3ea5d9765c08ea0615f84a48c6063 (`compute`, handed to __enzyme_autodiff with
// four taco_tensor_t tensors and their shadows). DIM = 16: 4096 inner iterations of five
// accesses, the 20,480 forward cluster-cache accesses of gem5_salam_results.csv.
//   A[i][j] += B[i][j] * C[i][k] * D[k][j]     (row-major DIM x DIM views of `vals`)
// Same loop nest, types, sizes and unroll pragma (`unroll(full)` on the j loop). Differs:
// - their four structs lie back to back in one memory region (top() places them at
//   consecutive addresses) and are passed as four pointers Enzyme cannot prove distinct;
//   here the four `vals` arrays (DIM^3 doubles each, as their struct declares, of which
//   the first DIM^2 are used) are the rows of one array T, so that the AD, like theirs,
//   must assume A's stores may overwrite B, C and D and caches their three values per
//   iteration (their TapeFlow run reads 12,288 = 3 x 4096 tape values: bin_zero_read_count);
// - the struct's other fields (order, dimensions, indices, ...) are not read by `compute`
//   and are dropped;
// - theirs returns nothing (the gradient is seeded through A's shadow); ours returns
//   loss = sum of A's DIM^2 entries after the update, which seeds every entry of A with 1.
// The unused `#define N 40` of theirs is dropped.
#ifndef DIM
#define DIM 16
#endif
#define VALS (DIM * DIM * DIM)

double compute(double T[4][VALS]) {
  // T[0] = A, T[1] = B, T[2] = C, T[3] = D (their parameter order)
  for (int i = 0; i < DIM; i++) {
    for (int k = 0; k < DIM; k++) {
      int kC = i * DIM + k;
#pragma clang loop unroll(full)
      for (int j = 0; j < DIM; j++) {
        int jA = i * DIM + j;
        int jB = i * DIM + j;
        int jD = k * DIM + j;
        T[0][jA] = T[0][jA] + (T[1][jB] * T[2][kC]) * T[3][jD];
      }
    }
  }
  double loss = 0.0;
  for (int j = 0; j < DIM * DIM; j++)
    loss += T[0][j];
  return loss;
}

void sddmm_enzyme(double *T, double *dT) {
  __enzyme_autodiff((void *)compute, enzyme_dup, T, dT);
}
