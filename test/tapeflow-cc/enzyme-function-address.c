// The function handed to __enzyme_autodiff may be named with `&`, `(void *)&f` (C
// written for Enzyme spells it both ways; Clang gives the same function pointer). Before,
// it was "unsupported C: __enzyme_autodiff of something other than a named function",
// which a variable's address still is.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/enzyme-variable-address.c 2>&1 | filecheck %s --check-prefix=VAR
#include <enzyme/enzyme.h>

double cube(double x) { return x * x * x; }

double dcube(double x) { return __enzyme_autodiff((void *)&cube, x); }

// CHECK: func.func @cube(%x: f64) -> f64 attributes {tapeflow.autodiff}
// CHECK: func.func @cube_grad(%x: f64, %seed: f64) -> f64
// VAR:   error: {{.*}}enzyme-variable-address.c:3:47: unsupported C: __enzyme_autodiff of something other than a named function
// VAR-NOT: Traceback
