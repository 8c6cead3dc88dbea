// `step(&s, dt)` with `s` a struct by value (a local or a parameter), as Enzyme's users
// advance a state in place: `s` is scalars (struct-value.c), so the call gets stack
// memrefs in the layout of a struct pointer (struct-integer-fields.c), stored from the
// fields before it and read back after it; a loop around the call carries the fields.
// The memrefs have the callee's dynamic type (no memref.cast) and are allocated once,
// in the entry block (as `&x`'s cells: a loop does not grow the stack). `&s` twice in
// one call (aliasing the copies could not express) stays an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/struct-address-twice.c 2>&1 | filecheck %s --check-prefix=TWICE
typedef struct { double x, v; int steps; } State;

static void step(State *s, double dt) {
  s->v -= dt * s->x;
  s->x += dt * s->v;
  s->steps++;
}

double f(double x0, double dt) {
  State s = {x0, 0.0, 0};
  for (int i = 0; i < 3; i++)
    step(&s, dt);
  return s.x * s.v * s.steps;
}

// CHECK-LABEL: func.func @f(
// CHECK:         %[[F:.*]] = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK:         %[[I:.*]] = memref.alloca(%{{.*}}) : memref<?xi64>
// CHECK:         scf.for %i = {{.*}} iter_args(%[[X:.*]] = %x0, %[[V:.*]] = %{{.*}}, %[[N:.*]] = %{{.*}}) -> (f64, f64, index)
// CHECK-NOT:       memref.alloca
// CHECK:           memref.store %[[X]], %[[F]][%{{.*}}] : memref<?xf64>
// CHECK:           memref.store %[[V]], %[[F]][%{{.*}}] : memref<?xf64>
// CHECK:           func.call @step(%[[F]], %[[I]], %dt) : (memref<?xf64>, memref<?xi64>, f64) -> ()
// CHECK:           %[[X2:.*]] = memref.load %[[F]][%{{.*}}] : memref<?xf64>
// CHECK:           %[[V2:.*]] = memref.load %[[F]][%{{.*}}] : memref<?xf64>
// CHECK:           scf.yield %[[X2]], %[[V2]], %{{.*}} : f64, f64, index
// CHECK-NOT:   memref.cast
// TWICE:       error: {{.*}}struct-address-twice.c:3:56: unsupported C: '& v' passed twice to one call
// TWICE-NOT:   Traceback
