// A pointer to a struct whose fields are all floats of one type (scalars, arrays, nested
// structs of them), as Enzyme users pass particles and parameters: C lays such a struct
// out as consecutive floats, so the pointer is a memref<?xf64> of them (an array of
// structs too) and `p->v[k]`, `ps[i].x`, `s->a.y` are loads at the field's offset; its
// shadow, passed as Enzyme passes it (`enzyme_dup, p, dp`), has the same layout. Structs
// with integer or pointer fields: struct-integer-fields.c, struct-pointer-fields.c; by
// value: struct-value.c; unions are errors (union.c).
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function total --function spring | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/union.c 2>&1 | filecheck %s --check-prefix=UNION
#include <enzyme/enzyme.h>

typedef struct { double x, y; double v[2]; } Particle;
struct System { Particle a; double k; };

double energy(const Particle *p) { return 0.5 * p->v[1] * p->v[1] + 9.81 * p->y; }

double total(const Particle *ps, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += ps[i].x * ps[i].v[1];
  return s;
}

double spring(struct System *s) {
  s->a.x = s->a.y * s->k;
  return s->a.x * (*s).k;
}

void grad(Particle *p, Particle *dp) { __enzyme_autodiff((void *)energy, enzyme_dup, p, dp); }

// CHECK-LABEL: func.func @energy(%p: memref<?xf64> {{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK-DAG:     %[[V1:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[Y:.*]] = arith.constant 1 : index
// CHECK:         memref.load %p[%[[V1]]] : memref<?xf64>
// CHECK:         memref.load %p[%[[Y]]] : memref<?xf64>
// CHECK-LABEL: func.func @total(
// CHECK:         %[[BASE:.*]] = arith.muli %i, %{{.*}} : index
// CHECK:         memref.load %ps[%{{.*}}] : memref<?xf64>
// CHECK-LABEL: func.func @spring(
// CHECK:         memref.store %{{.*}}, %s[%{{.*}}] : memref<?xf64>
// UNION:       error: {{.*}}union.c:{{.*}}: unsupported C:
