// <math.h> functions are math ops (float variants too); fmax/fmin are arith.maxnumf /
// minnumf (C's NaN rule), fabs is math.absf, pow is math.powf.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// A <math.h> function outside the list (README "C kernels") is refused by name, and the
// message no longer says it is "not a <math.h> function":
// RUN: not tapeflow-cc %S/Inputs/math-unknown.c 2>&1 | filecheck %s --check-prefix=UNKNOWN
#include <math.h>

double f(double x, double y, float z) {
  double a = sin(x) + cos(x) + tan(x) + exp(x) + log(y) + log1p(y) + expm1(x) + sqrt(y);
  double b = pow(x, y) + fabs(x) + tanh(x) + erf(x) + fmax(x, y) + fmin(x, y);
  double c = atan2(x, y) + floor(x) + ceil(x) + cbrt(x) + exp2(x) + log2(y) + log10(y);
  return a + b + c + sinf(z);
}

// CHECK: math.sin %x : f64
// CHECK: math.cos %x : f64
// CHECK: math.tan %x : f64
// CHECK: math.exp %x : f64
// CHECK: math.log %y : f64
// CHECK: math.log1p %y : f64
// CHECK: math.expm1 %x : f64
// CHECK: math.sqrt %y : f64
// CHECK: math.powf %x, %y : f64
// CHECK: math.absf %x : f64
// CHECK: math.tanh %x : f64
// CHECK: math.erf %x : f64
// CHECK: arith.maxnumf %x, %y : f64
// CHECK: arith.minnumf %x, %y : f64
// CHECK: math.atan2 %x, %y : f64
// CHECK: math.floor %x : f64
// CHECK: math.ceil %x : f64
// CHECK: math.cbrt %x : f64
// CHECK: math.exp2 %x : f64
// CHECK: math.log2 %y : f64
// CHECK: math.log10 %y : f64
// CHECK: math.sin %z : f32
// UNKNOWN:     error: {{.*}}math-unknown.c:2:39: unsupported C: call to 'nextafter' (not defined in this file, nor a <math.h> function that tapeflow-cc translates)
// UNKNOWN-NOT: Traceback
