// pathfinder: dynamic programming over a grid (Rodinia's pathfinder, min replaced by a
// product with the wall), from gem5-SALAM's AD suite. Theirs: sfu-arch/gem5-SALAM,
// benchmarks/AD/pathfinder/hw/pathfinder.c at commit
// 9a22c0c3918c97b0c3e207a971329c22a892ac78 (`run`, handed to __enzyme_autodiff with src and
// wall and their shadows, dst enzyme_const).
//   for t: swap(src, dst); for n in 1..COLS-1:
//     m = min(src[t][n], src[t][n-1], src[t][n+1] if n < COLS-2); dst[t+1][n] = wall[t+1][n] * m
// Sizes: ROWS = COLS = 100, NUM_RUNS = 1 (three 80,000-byte arrays). Their forward pass
// makes 48,807 cluster-cache accesses in gem5_salam_results.csv = 99 x (99 x 4 + 97): four
// accesses per cell and the n+1 load for n < COLS-2, as here.
// Same loops, types and sizes. Differs:
// - their row loop swaps the two pointers src and dst each step (the C subset has no
//   pointer locals yet): here the arrays are P0 (their src) and P1 (their dst) and the row
//   loop does two rows per iteration, even t reading P1 and writing P0, odd t the reverse,
//   as the swap makes them alternate, and the last even row after it when ROWS - 1 is odd
//   (a test of t's parity inside the loop would put the caches under a branch, where
//   TapeFlow keeps them as stacks);
// - their `if (n > 0)` is always true (n starts at 1) and is kept as written;
// - theirs returns nothing and dst is enzyme_const; here P1 is enzyme_dup (TapeFlow gives
//   every float array a shadow) and the function returns loss = sum of the last row written
//   (row ROWS-1 of P0 when ROWS is even, else of P1), which seeds that row with 1.
#ifndef ROWS
#define ROWS 100
#endif
#ifndef COLS
#define COLS 100
#endif
#define NUM_RUNS 1

double run(double P0[ROWS * COLS], double wall[ROWS * COLS], double P1[ROWS * COLS]) {
  double min;
  for (int j = 0; j < NUM_RUNS; j++) {
    // their row loop, two rows per iteration: the even t reads P1 and writes P0, the odd t
    // reads P0 and writes P1 (their swap makes src and dst alternate so)
    for (int t2 = 0; t2 < (ROWS - 1) / 2; t2++) {
      int t = 2 * t2;
      for (int n = 1; n < COLS; n++) {
        min = P1[t * COLS + n];
        if (n > 0)
          min = min <= P1[t * COLS + n - 1] ? min : P1[t * COLS + n - 1];
        if (n < COLS - 2)
          min = min <= P1[t * COLS + n + 1] ? min : P1[t * COLS + n + 1];
        P0[(t + 1) * COLS + n] = wall[(t + 1) * COLS + n] * min;
      }
      t = 2 * t2 + 1;
      for (int n = 1; n < COLS; n++) {
        min = P0[t * COLS + n];
        if (n > 0)
          min = min <= P0[t * COLS + n - 1] ? min : P0[t * COLS + n - 1];
        if (n < COLS - 2)
          min = min <= P0[t * COLS + n + 1] ? min : P0[t * COLS + n + 1];
        P1[(t + 1) * COLS + n] = wall[(t + 1) * COLS + n] * min;
      }
    }
#if (ROWS - 1) % 2 == 1
    // the last, even t when ROWS - 1 is odd (as at ROWS = 100)
    for (int n = 1; n < COLS; n++) {
      min = P1[(ROWS - 2) * COLS + n];
      if (n > 0)
        min = min <= P1[(ROWS - 2) * COLS + n - 1] ? min : P1[(ROWS - 2) * COLS + n - 1];
      if (n < COLS - 2)
        min = min <= P1[(ROWS - 2) * COLS + n + 1] ? min : P1[(ROWS - 2) * COLS + n + 1];
      P0[(ROWS - 1) * COLS + n] = wall[(ROWS - 1) * COLS + n] * min;
    }
#endif
  }
  double loss = 0.0;
  for (int n = 1; n < COLS; n++) {
#if ROWS % 2 == 0
    loss += P0[(ROWS - 1) * COLS + n];
#else
    loss += P1[(ROWS - 1) * COLS + n];
#endif
  }
  return loss;
}

void pathfinder_enzyme(double *P0, double *dP0, double *wall, double *dwall, double *P1,
                       double *dP1) {
  __enzyme_autodiff((void *)run, enzyme_dup, P0, dP0, enzyme_dup, wall, dwall, enzyme_dup,
                    P1, dP1);
}
