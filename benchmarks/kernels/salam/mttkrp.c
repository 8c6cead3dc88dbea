// mttkrp: matricized tensor times Khatri-Rao product (TACO-generated loop nest), from
// gem5-SALAM's AD suite. Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/mttkrp/hw/mttkrp.c at
// commit eaad970119bc9650370e9c46ec3efcc92a8185e8 (`compute`, handed to __enzyme_autodiff
// with four taco_tensor_t tensors and their shadows).
//   A[i][j] += B[i][k][l] * D[l][j] * C[k][j]   (row-major views of each `vals`)
// Size: N = 8. Their file and Makefile default to N = 12, but the run behind
// gem5_salam_results.csv made 20,480 forward cluster-cache accesses = 5 x 8^4 (N = 12 would
// make 5 x 12^4 = 103,680), so the CSV is of N = 8.
// Same loop nest, types and unroll pragma (`unroll_count(16)` on the j loop: at N = 8 it
// unrolls the loop fully, as Clang does when the count reaches the trip count). Differs:
// - their struct declares `double vals[N]` while the nest reads B's up to N^3 and the
//   others' up to N^2 entries, past the end of the array (into the next struct); here each
//   tensor gets the entries it reads: A, D, C N^2 doubles, B N^3;
// - their four structs lie back to back in one memory region (top() places them at
//   consecutive addresses) and are passed as four pointers Enzyme cannot prove distinct;
//   here the four tensors are consecutive parts of one array T (A, B, D, C in their
//   parameter order), so that the AD, like theirs, assumes A's stores may overwrite the
//   others and caches B, D and C per iteration (their TapeFlow run reads 12,288 = 3 x 4096
//   tape values: bin_zero_read_count);
// - theirs returns nothing (the gradient is seeded through A's shadow); ours returns
//   loss = sum of A's N^2 entries after the update, which seeds every entry of A with 1.
#ifndef N
#define N 8
#endif
#define OFF_A 0
#define OFF_B (N * N)
#define OFF_D (N * N + N * N * N)
#define OFF_C (2 * N * N + N * N * N)

double compute(double T[3 * N * N + N * N * N]) {
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < N; k++) {
      int kB = i * N + k;
      for (int l = 0; l < N; l++) {
        int lB = kB * N + l;
#pragma clang loop unroll_count(16)
        for (int j = 0; j < N; j++) {
          int jA = i * N + j;
          int jD = l * N + j;
          int jC = k * N + j;
          T[OFF_A + jA] = T[OFF_A + jA] + (T[OFF_B + lB] * T[OFF_D + jD]) * T[OFF_C + jC];
        }
      }
    }
  }
  double loss = 0.0;
  for (int j = 0; j < N * N; j++)
    loss += T[OFF_A + j];
  return loss;
}

void mttkrp_enzyme(double *T, double *dT) {
  __enzyme_autodiff((void *)compute, enzyme_dup, T, dT);
}
