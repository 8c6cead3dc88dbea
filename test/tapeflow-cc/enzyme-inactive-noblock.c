// `enzyme_inactive_noblock` (issue 23; Enzyme's enzyme_inactive that does not stop its
// activity analysis at the call) makes a call's result carry no derivative, as
// enzyme_inactive does; `enzyme_no_escaping_allocation` promises what TapeFlow's AD
// assumes anyway, so it changes nothing. f(a) = scale(a)*a + sq(a) with scale inactive:
// df/da = scale(a) + 2a = 8 at a = 2 (12 if scale were differentiated).
// REQUIRES: libclang
// RUN: tapeflow-cc %s 2>&1 | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry f_grad --args 2.0 1.0 | filecheck %s --check-prefix=VAL

__attribute__((enzyme_inactive_noblock)) double scale(double a) { return 2.0 * a; }
__attribute__((enzyme_no_escaping_allocation)) double sq(double a) { return a * a; }

double f(double a) { return scale(a) * a + sq(a); }

int main(void) {
  double d = __enzyme_autodiff((void *)f, 2.0);
  return d > 0.0;
}

// CHECK-NOT: error
// CHECK: func.func @f(%a: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff}
// VAL-NOT: Traceback
// VAL: result[0]: f64 = 8.0
