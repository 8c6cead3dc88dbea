// Clang's `__builtin_*` spellings of <math.h> functions (what `-ffast-math` code, macros
// and generated C use; issue 23 saw __builtin_pow and __builtin_cos) are the same `math`
// ops; `INFINITY`/`-INFINITY` and `HUGE_VAL` (which expand to `__builtin_inff()`/
// `__builtin_huge_val()`) are constants: a running maximum can start at -INFINITY.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry f --args 0.5 | filecheck %s --check-prefix=RESULT
#include <math.h>

double f(double x) {
  double m = -INFINITY;
  double v[3] = {__builtin_pow(x, 2.0), __builtin_cos(x), __builtin_sqrt(x) + __builtin_fabs(-x)};
  for (int i = 0; i < 3; i++)
    m = v[i] > m ? v[i] : m;
  return m < HUGE_VAL ? m : 0.0;
}

// CHECK:     arith.constant 0xfff0000000000000 : f64
// CHECK:     math.powf
// CHECK:     math.cos
// CHECK:     math.sqrt
// CHECK:     math.absf
// CHECK-NOT: func.call
// RESULT:    result[0]: f64 = 1.2071067811865475
