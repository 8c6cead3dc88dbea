// somier: spring forces on a 3-D grid of masses (BSC's somier), from gem5-SALAM's AD suite.
// Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/somier/hw/somier.c at commit
// bf2008c716ec7eef5ce1ce1459ca4a0b528b4578 (`compute_forces`, handed to __enzyme_autodiff
// with n, the positions X and their shadow, and the forces F enzyme_const).
// For each interior point, the springs to its (i-1), (i+1) and (j-1) neighbours add
// 0.25 K (|d|^2 - 1) d / |d|^2 to the neighbour's force (K = 10).
// Size: N = 10 (X and F 3 N^3 doubles, 24,000 bytes each). Their file and Makefile default
// to N = 16, but the run behind gem5_salam_results.csv made 18,432 forward cluster-cache
// accesses = 36 x 8^3 (12 accesses per block, three blocks, (N-2)^3 iterations), and its
// TapeFlow run reads 4,608 = 9 x 8^3 tape values: N = 10 (N = 16 would give 36 x 14^3).
// Same loops, blocks, types and sizes. Differs:
// - their X and F lie back to back in one memory region (top() places F right after X)
//   and are passed as two pointers Enzyme cannot prove distinct; here they are the two
//   halves of one array S (S[0 .. 3N^3) = X, S[3N^3 .. 6N^3) = F), so that the AD, like
//   theirs, must assume the F updates may overwrite X: it then caches 9 values per
//   iteration, 4,608 at N = 10, their TapeFlow run's tape reads (with X and F as separate
//   arrays it caches nothing);
// - theirs returns nothing and F is enzyme_const (so their gradient is zero; the reverse
//   pass still runs); here all of S is enzyme_dup (TapeFlow gives every float array a
//   shadow) and the function returns loss = sum of all F entries after the update, which
//   seeds every entry of F with 1;
// - their unused `int n` parameter is dropped (their code uses the macro N too);
// - their unroll pragma is dropped (the schedule is the hardware model's).
#ifndef N
#define N 10
#endif
#define N2 (N * N)
#define N3 (N * N * N)

double compute_forces(double S[6 * N3]) {
  // S[c * N3 + p] is X's coordinate c at grid point p, S[(3 + c) * N3 + p] F's
  double spring_K = 10.0;
  for (int i = 1; i < N - 1; i++) {
    for (int j = 1; j < N - 1; j++) {
      for (int k = 1; k < N - 1; k++) {
        {
          int neig_i = i - 1;
          int neig_j = j;
          int neig_k = k;
          double dx = S[0 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[0 * N3 + i * N2 + j * N + k];
          double dy = S[1 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[1 * N3 + i * N2 + j * N + k];
          double dz = S[2 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[2 * N3 + i * N2 + j * N + k];
          double dl = (dx * dx + dy * dy + dz * dz);
          double spring_F = 0.25 * spring_K * (dl - 1);
          double FX = spring_F * dx / dl;
          double FY = spring_F * dy / dl;
          double FZ = spring_F * dz / dl;
          S[(3 + 0) * N3 + neig_i * N2 + neig_j * N + neig_k] += FX;
          S[(3 + 1) * N3 + neig_i * N2 + neig_j * N + neig_k] += FY;
          S[(3 + 2) * N3 + neig_i * N2 + neig_j * N + neig_k] += FZ;
        }
        {
          int neig_i = i + 1;
          int neig_j = j;
          int neig_k = k;
          double dx = S[0 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[0 * N3 + i * N2 + j * N + k];
          double dy = S[1 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[1 * N3 + i * N2 + j * N + k];
          double dz = S[2 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[2 * N3 + i * N2 + j * N + k];
          double dl = (dx * dx + dy * dy + dz * dz);
          double spring_F = 0.25 * spring_K * (dl - 1);
          double FX = spring_F * dx / dl;
          double FY = spring_F * dy / dl;
          double FZ = spring_F * dz / dl;
          S[(3 + 0) * N3 + neig_i * N2 + neig_j * N + neig_k] += FX;
          S[(3 + 1) * N3 + neig_i * N2 + neig_j * N + neig_k] += FY;
          S[(3 + 2) * N3 + neig_i * N2 + neig_j * N + neig_k] += FZ;
        }
        {
          int neig_i = i;
          int neig_j = j - 1;
          int neig_k = k;
          double dx = S[0 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[0 * N3 + i * N2 + j * N + k];
          double dy = S[1 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[1 * N3 + i * N2 + j * N + k];
          double dz = S[2 * N3 + neig_i * N2 + neig_j * N + neig_k] - S[2 * N3 + i * N2 + j * N + k];
          double dl = (dx * dx + dy * dy + dz * dz);
          double spring_F = 0.25 * spring_K * (dl - 1);
          double FX = spring_F * dx / dl;
          double FY = spring_F * dy / dl;
          double FZ = spring_F * dz / dl;
          S[(3 + 0) * N3 + neig_i * N2 + neig_j * N + neig_k] += FX;
          S[(3 + 1) * N3 + neig_i * N2 + neig_j * N + neig_k] += FY;
          S[(3 + 2) * N3 + neig_i * N2 + neig_j * N + neig_k] += FZ;
        }
      }
    }
  }
  double loss = 0.0;
  for (int p = 0; p < 3 * N3; p++)
    loss += S[3 * N3 + p];
  return loss;
}

void somier_enzyme(double *S, double *dS) {
  __enzyme_autodiff((void *)compute_forces, enzyme_dup, S, dS);
}
