// A null test of a pointer bound to an array (a parameter, a malloc'ed buffer, a view),
// as Enzyme's users write after malloc or at a helper's top (`if (!b) return ...;`,
// `p == NULL`, `NULL != p`, `if (p)`), is a constant: `p == NULL` and `!p` false, `p` and
// `p != NULL` true. Allocations are assumed to succeed (as `memref.alloc`). Before, each
// was "unsupported C: a pointer used as a value". A pointer not yet bound (declared
// `= NULL`, not assigned) is still refused, and so are other pointer comparisons; so is
// a null pointer passed where an array is taken (the fold assumes every array non-null).
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/pointer-null-unbound.c 2>&1 | filecheck %s --check-prefix=UNBOUND
// RUN: not tapeflow-cc %S/Inputs/pointer-null-argument.c 2>&1 | filecheck %s --check-prefix=ARG
#include <stdlib.h>

static double sum(const double *v, int n) {
  if (v == NULL || n <= 0)
    return 0.0;
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += v[i];
  return s;
}

double f(double *x, int n) {
  double *b = malloc(n * sizeof(double));
  if (!b)
    return -1.0;
  if (b != NULL && x)
    b[0] = x[0];
  double r = sum(b, n);
  free(b);
  return r;
}

// `v == NULL` is the constant false (shared with the return flag's):
// CHECK:      func.func @sum(
// CHECK:        %[[F:.*]] = arith.constant false
// CHECK:        arith.cmpi sle, %n
// CHECK-NEXT:   arith.ori %[[F]], %{{.*}} : i1
// `!b` is not-true, `b != NULL && x` true-and-true:
// CHECK:      func.func @f(
// CHECK:        %[[T:.*]] = arith.constant true
// CHECK:        %b = memref.alloc
// CHECK-NEXT:   arith.xori %[[T]], %[[T]] : i1
// CHECK:        arith.andi %[[T]], %[[T]] : i1
// UNBOUND:    error: {{.*}}pointer-null-unbound.c:4:7: unsupported C: a pointer used as a value (index it instead)
// UNBOUND-NOT: Traceback
// ARG:        error: {{.*}}pointer-null-argument.c:10:49: unsupported C: a null pointer as an array (arrays are assumed non-null)
// ARG-NOT:    Traceback
