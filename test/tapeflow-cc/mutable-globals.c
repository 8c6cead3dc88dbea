// Mutable global variables (issue 23: Enzyme users keep state, weights and counters in
// globals): each is the module's `memref.global` (C's initializer, or zeros; a scalar
// is one element), read and written through a `memref.get_global` in every function
// that uses it, so callers and callees share it. The AD merges a global's get_globals
// into one buffer; a float global written from active data is active and its shadow is
// the zero-initialised `memref.global @<name>_shadow` that the reverse sweep
// accumulates into (Enzyme's shadow global): on exit it holds the adjoint of the
// global's contents at entry. Integer globals (counters) are never active; a global
// only read stays a constant (no shadow). An `extern` global without a definition is
// refused, and so is a user's own global named like the shadow. The interpreter and the native (upstream MLIR) path agree.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function h | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo --args 3.0 | filecheck %s --check-prefix=OUT
// RUN: tapeflow-cc %s | tapeflow-exec - --entry demo --args 3.0 | filecheck %s --check-prefix=OUT
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff{functions=h}' | filecheck %s --check-prefix=AD
// RUN: not tapeflow-cc %S/Inputs/global.c 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not tapeflow-opt %S/Inputs/global-shadow-name.c -p 'tapeflow-autodiff{functions=f}' 2>&1 | filecheck %s --check-prefix=NAME

double g = 1.0;
double w[3] = {0.5, 2.0};
double scale = 2.0;
int calls;

static void f(double *x) {
  g = x[0] * x[0];
  calls++;
}

static void accumulate(double *x) {
  for (int i = 0; i < 3; i++)
    w[i] += x[i];
}

double h(double *x) {
  f(x);
  accumulate(x);
  double s = g;
  for (int i = 0; i < 3; i++)
    s += w[i] * w[i];
  return scale * s * calls;
}

double demo(double v) {
  double x[3] = {v, 0.0, 0.0};
  h(x);
  return h(x);  // the second call sees the first's writes: calls == 2, w[0] == 0.5 + 2v
}

// CHECK:       "memref.global"() <{sym_name = "g", type = memref<1xf64>, initial_value = dense<1.000000e+00> : tensor<1xf64>, sym_visibility = "private"}>
// CHECK:       "memref.global"() <{sym_name = "calls", type = memref<1xi32>, initial_value = dense<0> : tensor<1xi32>
// CHECK:       "memref.global"() <{sym_name = "w", type = memref<3xf64>, initial_value = dense<[5.000000e-01, 2.000000e+00, 0.000000e+00]> : tensor<3xf64>
// CHECK-LABEL: func.func @f(
// CHECK:         %g = memref.get_global @g : memref<1xf64>
// CHECK:         memref.store %{{.*}}, %g[%{{.*}}] : memref<1xf64>
// CHECK-LABEL: func.func @h(
// CHECK:         %g = memref.get_global @g : memref<1xf64>
// CHECK:         func.call @f(%x)
// CHECK:         memref.load %g[%{{.*}}] : memref<1xf64>
// (v = 3: g = 9, w = {6.5, 2, 0}, s = 9 + 42.25 + 4 = 55.25, 2 * 55.25 * 2)
// OUT:         result[0]: f64 = 221.0
// AD:          "memref.global"() <{sym_name = "g_shadow", type = memref<1xf64>, initial_value = dense<0.000000e+00> : tensor<1xf64>, sym_visibility = "private"}> {tapeflow.shadow}
// AD:          "memref.global"() <{sym_name = "w_shadow", type = memref<3xf64>, initial_value = dense<0.000000e+00> : tensor<3xf64>
// AD-NOT:      scale_shadow
// AD-NOT:      calls_shadow
// AD-LABEL:    func.func @h_grad(
// AD-NEXT:       %{{.*}} = memref.get_global @calls
// AD-NEXT:       %{{.*}} = memref.get_global @scale
// AD-NEXT:       %w = memref.get_global @w : memref<3xf64>
// AD-NEXT:       %d_w = memref.get_global @w_shadow : memref<3xf64>
// AD-NEXT:       %g = memref.get_global @g : memref<1xf64>
// AD-NEXT:       %d_g = memref.get_global @g_shadow : memref<1xf64>
// AD-NOT:        memref.get_global
// ERR:         error: {{.*}}global.c:2:22: unsupported C: the extern global 'counter' (it has no definition in this file)
// ERR-NOT:     Traceback
// NAME:        error: {{.*}}global-shadow-name.c:3:8: 'func.func' cannot create the shadow global @w_shadow: the symbol exists
// NAME-NOT:    Traceback
