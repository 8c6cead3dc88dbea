// The exponent's derivative of pow at a zero base: d(a^b)/db = a^b log a, whose limit at
// a = 0 (b > 0) is 0; the rule gave 0 * log 0 = NaN (Enzyme's pow_zero.c expects 0).
// At (a, b) = (0, 1): d/da = b a^(b-1) = 1, d/db = 0; at (2, 3): 12 and 8 log 2.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry f_grad --args 0.0 1.0 1.0 | filecheck %s --check-prefix=ZERO
// RUN: tapeflow-cc %s --function f | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry f_grad --args 2.0 3.0 1.0 | filecheck %s --check-prefix=TWO
#include <math.h>

double f(double a, double b) { return pow(a, b); }

// ZERO:      result[0]: f64 = 1.0
// ZERO-NEXT: result[1]: f64 = 0.0
// TWO:       result[0]: f64 = 12.0
// TWO-NEXT:  result[1]: f64 = 5.545177
