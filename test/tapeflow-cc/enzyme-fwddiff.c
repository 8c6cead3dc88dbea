// __enzyme_fwddiff marks f for `tapeflow-fwdad` (tapeflow.fwddiff): each float argument is
// followed by its tangent unless enzyme_const (then a specialization f_<letters> marks it
// tapeflow.const); enzyme_dupnoneed is enzyme_dup. f_fwd returns the result's tangent, the
// tangent of an array's final contents is in its shadow; there is no tape.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt -p tapeflow-fwdad | filecheck %s --check-prefix=FWD
// RUN: tapeflow-cc %s | tapeflow-opt -p tapeflow-fwdad | tapeflow-run - --entry f_fwd --args 2.0 1.0 | filecheck %s --check-prefix=VAL
// RUN: not tapeflow-cc %s -D OUT 2>&1 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-cc %s -D UNDEFINED 2>&1 | filecheck %s --check-prefix=UNDEF
// RUN: tapeflow-cc %s -D CONST_STORE | not tapeflow-opt -p tapeflow-fwdad 2>&1 | filecheck %s --check-prefix=STORE
#include <math.h>

extern int enzyme_const, enzyme_dup, enzyme_dupnoneed, enzyme_out;
extern double __enzyme_fwddiff(void *, ...);

double f(double x) { return x * sin(x); }

void scale(const double *a, double *y, int n) {
  for (int i = 0; i < n; i++)
    y[i] = a[i] * y[i];
}

#ifdef CONST_STORE
void into_const(double *a, double x) { a[0] = x * x; }
#endif

int main(void) {
  double a[2] = {2.0, 3.0}, y[2] = {1.0, 1.0}, dy[2] = {1.0, 0.0};
  double df = __enzyme_fwddiff((void *)f, 2.0, 1.0);
  __enzyme_fwddiff((void *)scale, enzyme_const, a, enzyme_dupnoneed, y, dy, 2);
#ifdef OUT
  __enzyme_fwddiff((void *)f, enzyme_out, 2.0);
#endif
#ifdef UNDEFINED
  __enzyme_fwddiff((void *)cos, 2.0, 1.0);
#endif
#ifdef CONST_STORE
  __enzyme_fwddiff((void *)into_const, enzyme_const, a, 1.5, 1.0);
#endif
  return df > 0.0;
}
// CHECK:      func.func @f(%x: f64 {{.*}}) -> f64 attributes {tapeflow.fwddiff}
// CHECK:      func.func @scale_cdc(%a: memref<?xf64> {tapeflow.const} {{.*}}, %y: memref<?xf64> {{.*}}, %n: index {{.*}}) attributes {tapeflow.fwddiff}
// CHECK-NEXT:   func.call @scale(

// FWD:        func.func @f_fwd(%x: f64, %dx: f64) -> f64 {
// FWD-NOT:      tape.
// FWD:          func.return
// FWD:        func.func @scale_cdc_fwd(%a: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %n: index) {
// FWD:          scf.for
// FWD:            %[[A:.*]] = memref.load %a[%[[I:.*]]] : memref<?xf64>
// FWD-NEXT:       %[[Y:.*]] = memref.load %y[%[[I]]] : memref<?xf64>
// FWD-NEXT:       %[[DY:.*]] = memref.load %dy[%[[I]]] : memref<?xf64>
// FWD:            memref.store %{{.*}}, %dy[%[[I]]] : memref<?xf64>

// d(x sin x)/dx at 2 = sin 2 + 2 cos 2
// VAL: result[0]: f64 = 0.07700375

// OUT: error: {{.*}}enzyme-fwddiff.c:33:31: unsupported C: the Enzyme marker 'enzyme_out' in __enzyme_fwddiff (forward mode takes enzyme_dup, enzyme_dupnoneed and enzyme_const)
// OUT-NOT: error

// UNDEF: error: {{.*}}enzyme-fwddiff.c:36:20: __enzyme_fwddiff: function 'cos' has no definition in this file

// STORE: error: {{.*}}enzyme-fwddiff.c:25:40: 'memref.store' tapeflow-fwdad: a value with a tangent is stored into constant memory
