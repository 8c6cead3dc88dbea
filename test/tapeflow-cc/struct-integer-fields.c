// A pointer to a struct with integer fields, as Enzyme's users pass sizes beside data
// (`struct { int n; double v[4]; double w; }`, arrays of `{ double x; long k; double y; }`):
// its float fields are one memref in a layout of their own (the floats in declaration
// order), its integer fields an i64 memref, so the AD sees floats only where C has them;
// the shadow Enzyme passes (`dp`, a struct of the same type whose integer fields are
// unused) is the float memref's. A pointer into an array of them (`ke(&ps[i])`) counts
// structs: the callee's variant indexes each memref at it times the struct's count.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
// RUN: tapeflow-opt %s --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
#include <enzyme/enzyme.h>

typedef struct { int n; double v[4]; double w; } S;
typedef struct { double x; long k; double y; } P;

double f(S *s) {
  double r = 0.0;
  for (int i = 0; i < s->n; i++)
    r += s->v[i] * s->w;
  s->n = 0;
  return r;
}

double g(P *ps, int m) {
  double r = 0.0;
  for (int i = 0; i < m; i++)
    r += ps[i].x * ps[i].k + ps[i].y;
  return r;
}

static double ke(const P *p) { return p->x * p->k; }

double h(P *ps, int m) {
  double r = 0.0;
  for (int i = 0; i < m; i++)
    r += ke(&ps[i]);
  return r;
}

void d(S *s, S *ds, P *p, P *dp) {
  __enzyme_autodiff((void *)f, s, ds);
  __enzyme_autodiff((void *)g, p, dp, 2);
  __enzyme_autodiff((void *)h, p, dp, 2);
}

// CHECK-LABEL: func.func @f(%s: memref<?xf64>{{.*}}, %s_ints: memref<?xi64>{{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[W:.*]] = arith.constant 4 : index
// CHECK:         %[[N:.*]] = memref.load %s_ints[%[[ZERO]]] : memref<?xi64>
// CHECK:         memref.load %s[%{{.*}}] : memref<?xf64>
// CHECK:         memref.load %s[%[[W]]] : memref<?xf64>
// CHECK:         memref.store %{{.*}}, %s_ints[%[[ZERO]]] : memref<?xi64>
// CHECK-LABEL: func.func @g(%ps: memref<?xf64>{{.*}}, %ps_ints: memref<?xi64>{{.*}}, %m: index{{.*}})
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK:         %[[X:.*]] = arith.muli %i, %[[TWO]] : index
// CHECK:         memref.load %ps[%{{.*}}] : memref<?xf64>
// CHECK:         memref.load %ps_ints[%{{.*}}] : memref<?xi64>
// CHECK-LABEL: func.func @h(
// CHECK:         func.call @ke_at0(%ps, %ps_ints, %i) : (memref<?xf64>, memref<?xi64>, index) -> f64
// CHECK-LABEL: func.func @ke_at0(%p: memref<?xf64>{{.*}}, %p_ints: memref<?xi64>{{.*}}, %p_offset: index{{.*}})
// CHECK-DAG:     %[[NF:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[NI:.*]] = arith.constant 1 : index
// CHECK:         arith.muli %p_offset, %[[NF]] : index
// CHECK:         memref.load %p[%{{.*}}] : memref<?xf64>
// CHECK:         arith.muli %p_offset, %[[NI]] : index
// CHECK:         memref.load %p_ints[%{{.*}}] : memref<?xi64>
// GRAD-LABEL: func.func @f_grad(%s: memref<?xf64>{{.*}}, %d_s: memref<?xf64>, %s_ints: memref<?xi64>{{.*}}, %seed: f64)
// GRAD-LABEL: func.func @g_grad(%ps: memref<?xf64>{{.*}}, %d_ps: memref<?xf64>, %ps_ints: memref<?xi64>{{.*}}, %m: index{{.*}}, %seed: f64)
