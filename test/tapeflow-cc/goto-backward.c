// Backward gotos (a loop made of jumps): a function whose labels are all at the top level
// of its body and whose gotos are outside loops runs as a loop over its labels (a remark
// says so): a goto picks the label to run next and starts the next turn, falling into a
// label runs it in the same turn, the end of the body leaves the loop. The gradient is
// that of the loop (test_cfront_backjumps.py checks it against the same function written
// with loops, and finite differences). A backward goto inside a loop stays refused
// (errors.c).
// REQUIRES: libclang
// RUN: tapeflow-cc %s 2>&1 | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry halve --args 10.0 | filecheck %s --check-prefix=OUT
// RUN: tapeflow-cc %s | tapeflow-opt -p tapeflow-autodiff | tapeflow-run - --entry halve_grad --args 10.0 1.0 | filecheck %s --check-prefix=GRAD
extern double __enzyme_autodiff(void *, ...);

double halve(double x) {
again:
  x = x * 0.5;
  if (x > 1.0)
    goto again;
  return x;
}

double dhalve(double x) { return __enzyme_autodiff((void *)halve, x); }

// CHECK: remark: {{.*}}goto-backward.c:14:8: the backward gotos of 'halve' run as a loop over its labels
// CHECK: func.func @halve(%x: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK: scf.while
// 10 -> 5 -> 2.5 -> 1.25 -> 0.625
// OUT: result[0]: f64 = 0.625
// GRAD: result[0]: f64 = 0.0625
