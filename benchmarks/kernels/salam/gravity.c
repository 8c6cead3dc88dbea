// gravity: a product of pairwise potentials over the upper triangle of an N/2 x N/2
// matrix, from gem5-SALAM's AD suite. Theirs: sfu-arch/gem5-SALAM,
// benchmarks/AD/gravity/hw/gravity.c at commit a5e40f4be5c3ea5d9765c08ea0615f84a48c6063
// (`ComputeU`, handed to __enzyme_autodiff with x and its shadow), the version of the
// commit that added the result CSVs.
//   u = prod_{i<j<N/2} -1 / (x[i][j] - x[j][i] + 0.001)
// Size: N = 512, so 256 x 256 doubles are read (524,288 bytes; their buffer reserves N x N)
// and 32,640 pairs are visited: their TapeFlow run reads 97,920 = 3 x 32,640 tape values
// (bin_zero_read_count in gem5_salam_results.csv). Other stored versions of the file
// (e.g. 1226dca, N = 128 over a full square) do not match those counts.
// Same loops, types and sizes. Differs: `x` is an array parameter of the (N/2)^2 entries
// the loop reads, not a pointer into an N x N buffer; their unused global `dt` is dropped.
// The product of 32,640 factors overflows unless |r + 0.001| stays near 1: the manifest's
// inputs put 1 + U(-0.05, 0.05) above the diagonal and U(-0.05, 0.05) below it.
#ifndef N
#define N 512
#endif
#define H (N / 2)

double ComputeU(double x[H * H]) {
  double r;
  double u = 1.0;
  for (int i = 0; i < H; i++) {
    for (int j = i + 1; j < H; j++) {
      r = x[i * H + j] - x[j * H + i];
      u *= -1.0 / (r + 0.001);
    }
  }
  return u;
}

void gravity_enzyme(double *x, double *dx) {
  __enzyme_autodiff((void *)ComputeU, enzyme_dup, x, dx);
}
