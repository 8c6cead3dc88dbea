// Structs by value (a parameter, a local `struct V w = {...}; w.x = ...`, a returned
// struct), as Enzyme's users write small vectors: one scalar per field (SROA), so a
// struct parameter is its fields' arguments, a struct result its fields' results, and
// loops and branches carry the fields they assign. Enzyme's convention for an active
// struct by value (its default for one of floats): its gradient is returned, field by
// field (gradient-struct-return.c returns a struct of the gradients), so `f_grad` has
// one result per float field; a struct result has one seed per float field. A
// non-constant subscript into an array in a struct by value, designated initializers,
// and `enzyme_dup` on a struct by value (enzyme-activity.c) stay errors.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-opt %s --tapeflow-autodiff | filecheck %s --check-prefix=GRAD
// RUN: not tapeflow-cc %S/Inputs/struct-value-subscript.c 2>&1 | filecheck %s --check-prefix=SUB
// RUN: not tapeflow-cc %S/Inputs/struct-value-designated.c 2>&1 | filecheck %s --check-prefix=DESIG
#include <enzyme/enzyme.h>

struct V { double x, y; };

struct V scale(struct V a, double s) { return (struct V){a.x * s, a.y * s}; }

double f(struct V u, int n) {
  struct V w = {u.x, 0.0};
  for (int i = 0; i < n; i++)
    w.y += w.x * u.y;
  if (w.y > 1.0)
    w = scale(w, 0.5);
  return w.x * w.y;
}

void d(struct V u) { __enzyme_autodiff((void *)f, u, 3); }

// CHECK-LABEL: func.func @scale(%a_x: f64 {{.*}}, %a_y: f64 {{.*}}, %s: f64 {{.*}}) -> (f64, f64)
// CHECK:         %[[X:.*]] = arith.mulf %a_x, %s : f64
// CHECK:         %[[Y:.*]] = arith.mulf %a_y, %s : f64
// CHECK:         func.return %[[X]], %[[Y]] : f64, f64
// CHECK-LABEL: func.func @f(%u_x: f64 {{.*}}, %u_y: f64 {{.*}}, %n: index {{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK:         %[[LOOP:.*]] = scf.for %i = %{{.*}} to %n step %{{.*}} iter_args(%[[WY:.*]] = %{{.*}}) -> (f64)
// CHECK:           arith.mulf %u_x, %u_y : f64
// CHECK:         scf.if %{{.*}} -> (f64, f64)
// CHECK:           func.call @scale(%u_x, %[[LOOP]], %{{.*}}) : (f64, f64, f64) -> (f64, f64)
// CHECK-NOT:   memref.alloca
// GRAD-LABEL: func.func @f_grad(%u_x: f64, %u_y: f64, %n: index, %seed: f64) -> (f64, f64)
// SUB:        error: {{.*}}struct-value-subscript.c:2:65: unsupported C: a subscript that is not a constant, into an array in a struct by value
// SUB-NOT:    Traceback
// DESIG:      error: {{.*}}struct-value-designated.c:2:36: unsupported C: designated initializers ('.x = ', '[k] = ')
// DESIG-NOT:  Traceback
