// RUN: tapeflow-opt %s --tapeflow=machine=accel-salam --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED
// RUN: tapeflow-opt %s --tapeflow --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=COST
// RUN: tapeflow-opt %S/../python/Inputs/stencil_fixed.c --tapeflow --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=FITS
// RUN: tapeflow-opt %s -p 'tapeflow{mode=always}' --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=ALWAYS
// RUN: tapeflow-opt %s -p tapeflow-autodiff,tapeflow-regions --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REFUSED
// RUN: tapeflow-opt %s --tapeflow 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty

// `--remarks`: one located line per tape cache, saying what the pipeline did with it and,
// where a transform was not applied, why. The stencil's bound `n - 1` is computed by the
// C frontend inside the time loop (the regions pass alone refuses it; the pipeline hoists
// it first); the time loop's trip count is a run-time argument.

double stencil(double *u, long n, long steps) {
  for (long t = 0; t < steps; t++) {
    for (long i = 1; i < n - 1; i++) {
      u[i] = u[i] + 0.25 * u[i - 1] * u[i + 1];
    }
  }
  double loss = 0.0;
  for (long i = 0; i < n; i++) loss += u[i] * u[i];
  return loss;
}

void stencil_enzyme(double *u, double *du, long n, long steps) {
  __enzyme_autodiff((void *)stencil, enzyme_dup, u, du, enzyme_const, n, enzyme_const, steps);
}

// APPLIED: remark: {{.*}}remarks.c:16:28: cache of 'u[i - 1]' streamed: trip count known at run time; per tile of {{[0-9]+}} B, misses ~{{[0-9]+}} cycles > streaming ~{{[0-9]+}}
// APPLIED: remark: {{.*}}remarks.c:16:39: cache of 'u[i + 1]' streamed

// COST: remark: {{.*}}remarks.c:16:28: cache of 'u[i - 1]' packed into a DRAM record tape, layers skipped: trip count known at run time (Enzyme's layout would be a stack); per tile of {{[0-9]+}} B, streaming ~{{[0-9]+}} cycles >= misses ~{{[0-9]+}}
// COST: remark: {{.*}}remarks.c:16:39: cache of 'u[i + 1]' packed into a DRAM record tape

// FITS: remark: {{.*}}stencil_fixed.c:7:28: cache of 'u[i - 1]' kept in Enzyme's layout, layers skipped: tape 560 B fits the L1 share (16384 B)

// ALWAYS: remark: {{.*}}remarks.c:16:28: cache of 'u[i - 1]' streamed (mode=always)

// REFUSED: remark: {{.*}}remarks.c:16:{{[0-9]+}}: cache of 'u[i {{[-+]}} 1]' kept in Enzyme's layout: bound 'n - 1' of an inner loop is defined inside the outer loop

// QUIET-NOT: remark
