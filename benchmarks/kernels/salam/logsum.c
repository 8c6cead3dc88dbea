// logsum: log-sum-exp written as a running product, from gem5-SALAM's AD suite.
// Theirs: sfu-arch/gem5-SALAM, benchmarks/AD/logsum/hw/logsum.c at commit
// d68b91f1b321a9abef11c526cdb8f68ba64d4628 (`logsumexp`, handed to __enzyme_autodiff with
// the input and its shadow). N = 10000 doubles there (80,000 bytes); their forward pass
// makes 10,001 cluster-cache accesses in gem5_salam_results.csv (x[0] and N loads).
// Same algorithm, types, sizes and unroll pragma (`unroll_count(8)`, applied by the C
// path's `tapeflow-unroll`). Differs: `const double *x` is `double x[N]` (a static
// shape). The loss is mathematically sum(x) - (N-1) x[0], but as written it multiplies N exponentials, so inputs
// must keep sum(x[i] - x[0]) small (the manifest scales them by 1e-3).
#include <math.h>
#ifndef N
#define N 10000
#endif

double logsumexp(double x[N]) {
  double A = x[0];
  double sema = 1;
#pragma clang loop unroll_count(8)
  for (int i = 0; i < N; i++)
    sema *= exp(x[i] - A);
  return log(sema) + A;
}

void logsum_enzyme(double *x, double *dx) {
  __enzyme_autodiff((void *)logsumexp, enzyme_dup, x, dx);
}
