// Enzyme's function attributes, which Clang drops with a warning (Enzyme's plugin reads
// them): they change the gradient the author asked for, so they are honoured, never
// ignored. `enzyme_inactive`: the call's result carries no derivative (a bitcast to i64
// and back: the same bits, but activity does not follow integers); an inactive void
// function without array writes is not called at all. `enzyme_function_like("log1p")`:
// the call is `math.log1p`, whose derivative the AD knows. `enzyme_nofree` changes nothing.
// REQUIRES: libclang
// RUN: tapeflow-cc %s 2>&1 | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/enzyme-attribute-unknown.c 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tapeflow-cc %S/Inputs/enzyme-function-like-bad.c 2>&1 | filecheck %s --check-prefix=LIKE
// RUN: not tapeflow-cc %S/Inputs/enzyme-inactive-writes.c 2>&1 | filecheck %s --check-prefix=WRITES
// An attribute on a local or a parameter of a function is not on the function (before,
// it made the function around it inactive, and the gradient through it zero, silently):
// RUN: not tapeflow-cc %S/Inputs/enzyme-attribute-local.c 2>&1 | filecheck %s --check-prefix=LOCAL
// RUN: not tapeflow-cc %S/Inputs/enzyme-attribute-param.c 2>&1 | filecheck %s --check-prefix=PARAM
// Nor is one on a typedef or a struct (before, it went to the next function, `h`):
// RUN: not tapeflow-cc %S/Inputs/enzyme-attribute-typedef.c 2>&1 | filecheck %s --check-prefix=TYPEDEF
// RUN: not tapeflow-cc %S/Inputs/enzyme-attribute-struct.c 2>&1 | filecheck %s --check-prefix=STRUCT
#include <enzyme/enzyme.h>
#include <math.h>

__attribute__((enzyme_inactive)) double scale(double x) { return 2.0 * x; }
__attribute__((enzyme_inactive, enzyme_nofree)) void log_state(const double *x) {}
double __attribute__((enzyme_function_like("log1p"))) my_log1p(double x) { return log(1.0 + x); }

double f(double *x, int n) {
  double r = 0.0;
  for (int i = 0; i < n; i++) {
    log_state(x);
    r += scale(x[i]) * x[i] + my_log1p(x[i] * x[i]);
  }
  return r;
}

void grad(double *x, double *dx, int n) { __enzyme_autodiff((void *)f, x, dx, n); }

// CHECK:      func.func @scale(
// CHECK-NOT:  func.func @log_state
// CHECK-NOT:  func.func @my_log1p
// CHECK:      func.func @f(
// CHECK:        %[[S:.*]] = func.call @scale(
// CHECK-NEXT:   %[[B:.*]] = arith.bitcast %[[S]] : f64 to i64
// CHECK-NEXT:   arith.bitcast %[[B]] : i64 to f64
// CHECK:        math.log1p
// CHECK-NOT:    func.call
// CHECK:      }
// UNKNOWN:    error: {{.*}}enzyme-attribute-unknown.c:1:16: unsupported C: the Enzyme attribute 'enzyme_shouldrecompute'
// LIKE:       error: {{.*}}enzyme-function-like-bad.c:1:23: unsupported C: enzyme_function_like(my_alloc): only <math.h> functions
// WRITES:     error: {{.*}}enzyme-inactive-writes.c:1:39: unsupported C: the enzyme_inactive function 'clip' writes float arrays (only a result is made inactive)
// CHECK-NOT:  Traceback
// LOCAL:      error: {{.*}}enzyme-attribute-local.c:3:27: unsupported C: the Enzyme attribute 'enzyme_inactive' on something other than a function
// LOCAL-NOT:  Traceback
// PARAM:      error: {{.*}}enzyme-attribute-param.c:2:42: unsupported C: the Enzyme attribute 'enzyme_inactive' on something other than a function
// PARAM-NOT:  Traceback
// TYPEDEF:    error: {{.*}}enzyme-attribute-typedef.c:2:36: unsupported C: the Enzyme attribute 'enzyme_inactive' on something other than a function
// STRUCT:     error: {{.*}}enzyme-attribute-struct.c:2:23: unsupported C: the Enzyme attribute 'enzyme_inactive' on something other than a function
