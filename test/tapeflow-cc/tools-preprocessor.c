// `-I` and `-D` on every tool that takes a `.c` file (issue 23: tapeflow-opt rejected
// `-I`): the header is found in the -I directory and N comes from -D, in tapeflow-opt,
// tapeflow-run (also after --args values), tapeflow-exec and tapeflow-sim.
// REQUIRES: libclang
// RUN: tapeflow-opt %s -I %S/Inputs -DN=2 | filecheck %s --check-prefix=OPT
// RUN: tapeflow-run %s --entry f --args 1.0 -I%S/Inputs -DN=2 | filecheck %s --check-prefix=RESULT
// RUN: tapeflow-sim %s -I %S/Inputs -D N=2 --entry f --args 1.0 | filecheck %s --check-prefix=SIM
// RUN: not tapeflow-opt %s 2>&1 | filecheck %s --check-prefix=MISSING
#include "scale.h"

double f(double x) { return x * SCALE * N; }

// OPT:     arith.constant 3.000000e+00 : f64
// OPT:     arith.constant 2.000000e+00 : f64
// RESULT:  result[0]: f64 = 6.0
// SIM:     cycles:
// MISSING: error: {{.*}}tools-preprocessor.c:9:10: 'scale.h' file not found
// MISSING-NOT: Traceback
