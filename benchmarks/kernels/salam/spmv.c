// spmv: TACO-generated sparse matrix-vector loop y[i] += a[ja] * x[i] * z[i] over a row's
// entries, from gem5-SALAM's AD suite (their spmv_cache_result.csv is not in the 8ILP set).
// Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/spmv/hw/spmv.c at commit
// a5e40f4be5c3ea5d9765c08ea0615f84a48c6063 (`compute`, handed to __enzyme_autodiff with
// four taco_tensor_t tensors and their shadows), sizes R = C = N = 500 from
// benchmarks/AD/spmv/spmv_clstr_hw_defines.h at commit
// 33a0fe08b665f43f484c7c48d816136d894b37c9.
// Their row bounds a2_pos are the tensor's indices[1][0], which their top() fills with the
// row number of each (i, j) with i + j even, in row-major order: a2_pos[k] = k / (C/2).
// So row i has entries only where that row number steps (at N = C = 500: rows 249 and 499,
// one entry each). The manifest gives `pos` exactly that content.
// Same loop nest, types and sizes (500 doubles per tensor). Differs:
// - their four structs lie back to back in one memory region and are passed as pointers
//   Enzyme cannot prove distinct: here their `vals` are the rows of one array T (y, a, x, z
//   in their parameter order), so that the AD, like theirs, assumes y's stores may
//   overwrite a, x and z; the index array `pos` is its own (int) parameter;
// - their int32 counters and the unused z1_dimension and tjy_val are dropped or `int`;
// - theirs returns a double it never sets (declared void); ours returns loss = sum of y.
#ifndef N
#define N 500
#endif
#ifndef C
#define C 500 // their column count: it only shapes the inputs (pos[k] = k / (C/2))
#endif

double compute(double T[4][N], int pos[N + 1]) {
  // T[0] = y, T[1] = a, T[2] = x, T[3] = z
  int iy = 0;
  for (int i = 0; i < N; i++) {
    for (int ja = pos[i]; ja < pos[i + 1]; ja++) {
      T[0][iy] += (T[1][ja] * T[2][i]) * T[3][i];
    }
    iy++;
  }
  double loss = 0.0;
  for (int i = 0; i < N; i++)
    loss += T[0][i];
  return loss;
}

void spmv_enzyme(double *T, double *dT, int *pos) {
  __enzyme_autodiff((void *)compute, enzyme_dup, T, dT, enzyme_const, pos);
}
