// A local union of same-size scalars is one SSA value, kept as its first float field;
// reading the integer field reinterprets the bits (arith.bitcast, then index_cast to C's
// `index` integers), writing it bitcasts back, so no derivative flows through the integer
// view. Loops carry the union as one value. A union initializer sets its first field.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
#include <stdint.h>

union bits { double d; uint64_t u; };

double f(double *x, int n) {
  union bits v;
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    v.d = x[i] * x[i];
    uint64_t exponent = (v.u >> 52) & 2047;
    s += v.d * (double)exponent;
  }
  return s + v.d;
}
// CHECK-LABEL: func.func @f
// CHECK:       scf.for {{.*}} iter_args(%[[V:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (f64, f64)
// CHECK:         %[[SQ:.*]] = arith.mulf
// CHECK-NEXT:    %[[B:.*]] = arith.bitcast %[[SQ]] : f64 to i64
// CHECK-NEXT:    arith.index_cast %[[B]] : i64 to index
// CHECK:         scf.yield %[[SQ]], %{{.*}} : f64, f64

float g(float a) {
  union { int32_t k; float f; } w = {1065353216};
  w.k += 1;
  return w.f * a;
}
// CHECK-LABEL: func.func @g
// CHECK:       %[[K:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT:  %[[F:.*]] = arith.bitcast %[[K]] : i32 to f32
// CHECK:       %[[K2:.*]] = arith.bitcast %[[F]] : f32 to i32
// CHECK-NEXT:  arith.index_cast %[[K2]] : i32 to index
// CHECK:       arith.addi
// CHECK-NEXT:  %[[K3:.*]] = arith.index_cast %{{.*}} : index to i32
// CHECK-NEXT:  %[[F3:.*]] = arith.bitcast %[[K3]] : i32 to f32
// CHECK-NEXT:  arith.mulf %[[F3]], %a : f32
