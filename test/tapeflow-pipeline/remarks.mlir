// REQUIRES: libclang
// RUN: tapeflow-opt %S/../python/Inputs/stencil_dynamic.c --tapeflow=machine=accel-salam --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=APPLIED
// RUN: tapeflow-opt %S/../python/Inputs/stencil_dynamic.c --tapeflow --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=COST
// RUN: tapeflow-opt %S/../python/Inputs/stencil_fixed.c --tapeflow --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=FITS
// RUN: tapeflow-opt %S/../python/Inputs/stencil_dynamic.c -p 'tapeflow{mode=always}' --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=ALWAYS
// RUN: tapeflow-opt %S/../python/Inputs/stencil_dynamic.c -p tapeflow-autodiff,tapeflow-regions --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=ALONE
// RUN: tapeflow-opt %S/../python/Inputs/stencil_dynamic.c --tapeflow 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty

// `--remarks`: one located line per tape cache, saying what the pipeline did with it and,
// where a transform was not applied, why. In the C stencil of test/python/Inputs, the
// bound `n - 1` is computed by the C frontend inside the time loop (the regions pass
// alone takes it for a ragged nest, whose trip count may vary with the time step; the
// pipeline hoists it first, so the nest is rectangular); the trip counts are run-time
// arguments.

// APPLIED: remark: {{.*}}stencil_dynamic.c:6:28: cache of 'u[i - 1]' streamed: trip count known at run time; per tile of {{[0-9]+}} B, misses ~{{[0-9]+}} cycles > streaming ~{{[0-9]+}}
// APPLIED: remark: {{.*}}stencil_dynamic.c:6:39: cache of 'u[i + 1]' streamed

// COST: remark: {{.*}}stencil_dynamic.c:6:28: cache of 'u[i - 1]' kept in Enzyme's layout, layers skipped: trip count known at the nest's entry (arrays sized there); per tile of {{[0-9]+}} B, streaming ~{{[0-9]+}} cycles >= misses ~{{[0-9]+}}
// COST: remark: {{.*}}stencil_dynamic.c:6:39: cache of 'u[i + 1]' kept in Enzyme's layout

// FITS: remark: {{.*}}stencil_fixed.c:7:28: cache of 'u[i - 1]' kept in Enzyme's layout, layers skipped: tape 560 B fits the L1 share (16384 B)

// ALWAYS: remark: {{.*}}stencil_dynamic.c:6:28: cache of 'u[i - 1]' streamed (mode=always)

// ALONE: remark: {{.*}}stencil_dynamic.c:6:{{[0-9]+}}: cache of 'u[i {{[-+]}} 1]' in a ragged region (records indexed by running offsets: the inner trip count varies with the outer iteration)

// QUIET-NOT: remark
