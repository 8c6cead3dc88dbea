// --function NAME marks NAME as __enzyme_autodiff would, without a call; only it and its
// callees are translated. An unknown name is an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function g | filecheck %s
// RUN: not tapeflow-cc %s --function nope 2>&1 | filecheck %s --check-prefix=ERR

static double h(double v) { return v * 3.0; }
double g(double *x) { return h(x[0]); }
double other(double *x) { return x[1]; }

// CHECK-NOT:  @other
// CHECK:      func.func @h
// CHECK:      func.func @g(%x: memref<?xf64> {{.*}}) -> f64 attributes {tapeflow.autodiff}
// CHECK-NOT:  @other
// ERR: error: {{.*}}function-option.c: --function nope: no function 'nope' is defined
