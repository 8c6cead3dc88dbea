// A local array of structs (`P ps[2] = {...}`), as Enzyme's users keep a few particles
// on the stack: stack memrefs in the layout of a struct pointer (struct-integer-fields.c:
// floats, then integers), of dynamic type, so passing it whole (`tot(ps, 2)`) or as a
// view (`ke(&ps[1])`) needs no memref.cast; the initializer stores field by field. One
// of structs with pointer fields stays an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/struct-local-array-pointer.c 2>&1 | filecheck %s --check-prefix=PTR
typedef struct { double x, v; int id; } P;

static double ke(const P *p) { return 0.5 * p->v * p->v * p->x * p->id; }

static double tot(const P *ps, int n) {
  double e = 0;
  for (int i = 0; i < n; i++)
    e += ke(&ps[i]);
  return e;
}

double f(double s, double t) {
  P ps[2] = {{s, t, 2}, {t * s, 1.0, 3}};
  return tot(ps, 2) + ke(&ps[1]);
}

// CHECK-LABEL: func.func @f(
// CHECK-DAG:     %[[NF:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[NI:.*]] = arith.constant 2 : index
// CHECK:         %ps = memref.alloca(%[[NF]]) : memref<?xf64>
// CHECK:         %ps_ints = memref.alloca(%[[NI]]) : memref<?xi64>
// CHECK:         memref.store %s, %ps[%{{.*}}] : memref<?xf64>
// CHECK:         memref.store %{{.*}}, %ps_ints[%{{.*}}] : memref<?xi64>
// CHECK:         func.call @tot(%ps, %ps_ints, %{{.*}}) : (memref<?xf64>, memref<?xi64>, index) -> f64
// CHECK:         func.call @ke_at0(%ps, %ps_ints, %{{.*}}) : (memref<?xf64>, memref<?xi64>, index) -> f64
// CHECK-NOT:   memref.cast
// PTR:         error: {{.*}}struct-local-array-pointer.c:2:31: unsupported C: a local array of 'struct V' (a struct with pointer fields)
// PTR-NOT:     Traceback
