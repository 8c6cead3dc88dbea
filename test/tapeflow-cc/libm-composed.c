// hypot, fmod, ldexp and frexp are no single math op: each is a composition of ops the
// AD rules know (tapeflow/frontends/c/libm.py). fmod is fma(-trunc(x/y), y, x) corrected
// by one y; ldexp and frexp scale by powers of two built from their bits (integers, no
// derivative); frexp writes its exponent into the local through '&e'. The float variants
// (ldexpf) run in double and round once. An exponent elsewhere than '&n' of a local is
// refused with one located line.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/frexp-exponent.c 2>&1 | filecheck %s --check-prefix=EXP
#include <math.h>

double h(double x, double y) { return hypot(x, y); }
// CHECK-LABEL: func.func @h
// CHECK:      %[[XX:.*]] = arith.mulf %x, %x : f64
// CHECK-NEXT: %[[YY:.*]] = arith.mulf %y, %y : f64
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[XX]], %[[YY]] : f64
// CHECK-NEXT: math.sqrt %[[S]] : f64

double r(double x, double y) { return fmod(x, y); }
// CHECK-LABEL: func.func @r
// CHECK:      %[[Q:.*]] = arith.divf %x, %y : f64
// CHECK-NEXT: %[[T:.*]] = math.trunc %[[Q]] : f64
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[T]] : f64
// CHECK-NEXT: math.fma %[[N]], %y, %x : f64
// CHECK:      math.copysign %y, %x : f64

double l(double x, int e) { return ldexp(x, e); }
// CHECK-LABEL: func.func @l
// CHECK:      arith.index_cast %e : index to i64
// CHECK:      arith.shli
// CHECK-NEXT: %[[P:.*]] = arith.bitcast %{{.*}} : i64 to f64
// CHECK-NEXT: arith.mulf %x, %[[P]] : f64

float lf(float x, int e) { return ldexpf(x, e); }
// CHECK-LABEL: func.func @lf
// CHECK:      arith.extf %x : f32 to f64
// CHECK:      arith.truncf %{{.*}} : f64 to f32

double m(double x, int *out) {
  int e;
  double mant = frexp(x, &e);
  out[0] = e;
  return mant;
}
// CHECK-LABEL: func.func @m
// CHECK:      arith.bitcast %x : f64 to i64
// CHECK:      %[[SPECIAL:.*]] = arith.ori
// CHECK-NEXT: arith.select %[[SPECIAL]], %x, %{{.*}} : f64
// CHECK-NEXT: %[[E:.*]] = arith.select %[[SPECIAL]], %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %[[EI:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK:      arith.index_cast %[[EI]] : index to i32
// CHECK:      memref.store

// EXP:     error: {{.*}}frexp-exponent.c:2:46: unsupported C: frexp's exponent other than '&n' of a local integer 'n'
// EXP-NOT: Traceback
