// A pointer to a struct whose fields point to arrays (`struct { int n; double *x; }`), as
// Enzyme's users bundle a size and its data: each pointer field is a memref argument of
// its own, after the struct's float and integer memrefs, so its shadow follows it as
// Enzyme's shadow struct holds the shadow arrays (`dv->x = dx`, mixedstruct1-simple.c).
// Pointer fields are assumed not to alias (as pointer parameters). A pointer field of a
// struct in an array (`ps[i].x`), one written, or a pointer into an array of such
// structs (`ps + i`) stays an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-opt %s --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
// RUN: not tapeflow-cc %S/Inputs/struct-field-array.c 2>&1 | filecheck %s --check-prefix=ARRAY
// RUN: not tapeflow-cc %S/Inputs/struct-field-assign.c 2>&1 | filecheck %s --check-prefix=ASSIGN
// RUN: not tapeflow-cc %S/Inputs/struct-field-view.c 2>&1 | filecheck %s --check-prefix=VIEW
#include <enzyme/enzyme.h>

typedef struct { int n; double *x; double scale; } Vec;

double dot(const double *a, const double *b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

double f(Vec *v) {
  double *x = v->x;
  return dot(v->x, x, v->n) * v->scale + *v->x;
}

void d(Vec *v, Vec *dv) { __enzyme_autodiff((void *)f, v, dv); }

// CHECK-LABEL: func.func @f(%v: memref<?xf64>{{.*}}, %v_ints: memref<?xi64>{{.*}}, %v_x: memref<?xf64>{{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK:         func.call @dot(%v_x, %v_x, %{{.*}}) : (memref<?xf64>, memref<?xf64>, index) -> f64
// CHECK:         memref.load %v[%{{.*}}] : memref<?xf64>
// CHECK:         memref.load %v_x[%{{.*}}] : memref<?xf64>
// GRAD-LABEL: func.func @f_grad(%v: memref<?xf64>{{.*}}, %d_v: memref<?xf64>, %v_ints: memref<?xi64>{{.*}}, %v_x: memref<?xf64>{{.*}}, %d_v_x: memref<?xf64>, %seed: f64)
// ARRAY:      error: {{.*}}struct-field-array.c:2:46: unsupported C: the pointer field 'x' of a struct in an array (only of the struct a parameter points to)
// ARRAY-NOT:  Traceback
// ASSIGN:     error: {{.*}}struct-field-assign.c:2:34: unsupported C: assigning the pointer field 'x' (the caller sets it)
// ASSIGN-NOT: Traceback
// VIEW:       error: {{.*}}struct-field-view.c:2:53: unsupported C: a pointer into an array of 'struct P' (a struct with pointer fields)
// VIEW-NOT:   Traceback
