// Pointers Enzyme's own tests (remat.c, rwrmeta.c, differential_pointer_return.c,
// dbginfo2.c, nested_guard_inactive_lcssa.c) take: `*pp` and `pp[k]` of a pointer to
// pointers are a row of its 2-D memref, each access one of the 2-D memref; a pointer
// parameter the function moves (`x = step(x)`, `a -= 1`) is a view of the caller's array
// from offset 0; a malloc'ed struct of floats is its floats; `&a` of a local array is
// where `a` starts. A row as a call argument and a store into the rows stay errors.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/pointer-row-argument.c 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not tapeflow-cc %S/Inputs/pointer-row-store.c 2>&1 | filecheck %s --check-prefix=STORE
#include <stdlib.h>
#include <string.h>

double rows(double **pp, int n) {
  double *first = *pp;
  double *second = pp[1];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += first[i] * second[i];
  return s;
}
// CHECK-LABEL: func.func @rows(%pp: memref<?x?xf64>
// CHECK:         memref.load %pp[%{{.*}}, %i] : memref<?x?xf64>
// CHECK:         memref.load %pp[%{{.*}}, %i] : memref<?x?xf64>

double *step(double *x) {
  x[0] = x[0] * 2.0;
  return x + 1;
}

double moved(double *x, double *a) {
  x = step(x);
  a -= 1;
  return x[0] * a[2];
}
// CHECK-LABEL: func.func @moved(
// CHECK:         %[[AT:.*]] = func.call @step_at0(%x, %{{.*}}) : (memref<?xf64>, index) -> index
// CHECK:         memref.load %x[%[[AT]]] : memref<?xf64>
// CHECK:         memref.load %a[%{{.*}}] : memref<?xf64>

struct Pair { double x, y; };

double pair(double x) {
  struct Pair *p = malloc(sizeof(struct Pair));
  p->x = 2 * x;
  p->y = x + 3;
  double r = p->x * p->y;
  free(p);
  return r;
}
// CHECK-LABEL: func.func @pair(
// CHECK:         %p = memref.alloc(%{{.*}}) : memref<?xf64>

double first_of(double *v) {
  double local[3];
  memcpy(&local, v, 2 * sizeof(double));
  return local[0] + local[1];
}
// CHECK-LABEL: func.func @first_of(
// CHECK:         %local = memref.alloca() : memref<3xf64>
// CHECK:         memref.store %{{.*}}, %local[%{{.*}}] : memref<3xf64>
// ERR: error: {{.*}}pointer-row-argument.c:5:14: unsupported C: a row of a pointer to pointers ('*pp', 'pp[k]') as an argument (pass the pointer to pointers)
// STORE: error: {{.*}}pointer-row-store.c:4:3: unsupported C: storing a pointer into a pointer to pointers ('pp[k] = ...': its rows are fixed, a 2-D array)
