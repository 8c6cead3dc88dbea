// `&x` of a scalar local passed to a function of the file (issue 23: Enzyme users write
// out-parameters, `void step(double *s, ...)` called as `step(&acc, ...)`): a
// one-element `memref.alloca` of the parameter's type (in the entry block, one per
// variable) holds `x` for the call and is read back into `x` after it, so `x` stays an
// SSA value (carried by loops) everywhere else.
// `&x` anywhere else (`double *p = &x`) is refused.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function run | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo --args 0.5 | filecheck %s --check-prefix=OUT
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff{functions=run}' | filecheck %s --check-prefix=AD
// RUN: not tapeflow-cc %S/Inputs/address-of.c 2>&1 | filecheck %s --check-prefix=ERR

void step(double *s, const double *x, int i) { *s = *s * 0.5 + x[i] * x[i]; }
void count(int *k) { *k += 2; }

double run(double *x, int n) {
  double acc = 1.0;
  int k = 0;
  for (int i = 0; i < n; i++) {
    step(&acc, x, i);
    count(&k);
  }
  return acc * k;
}

double demo(double v) {
  double x[2] = {v, 2.0 * v};
  return run(x, 2);
}

// CHECK-LABEL: func.func @run(
// CHECK:         %acc_cell = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK-NEXT:    %k_cell = memref.alloca(%{{.*}}) : memref<?xi32>
// CHECK-NEXT:    scf.for %i = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[K:.*]] = %{{.*}}) -> (f64, index) {
// CHECK-NEXT:      memref.store %[[ACC]], %acc_cell[%{{.*}}] : memref<?xf64>
// CHECK-NEXT:      func.call @step(%acc_cell, %x, %i)
// CHECK-NEXT:      %[[NEW:.*]] = memref.load %acc_cell[%{{.*}}] : memref<?xf64>
// CHECK:           func.call @count(%k_cell)
// CHECK:           scf.yield %[[NEW]], %{{.*}} : f64, index
// (v = 0.5: acc = 0.5 * (0.5 * 1 + 0.25) + 1 = 1.375, k = 4)
// OUT:         result[0]: f64 = 5.5
// AD-LABEL:    func.func @run_grad(
// AD-NOT:      func.call
// AD:          %acc_cell = memref.alloca
// AD-NEXT:     %d_acc_cell = memref.alloca
// ERR:         error: {{.*}}address-of.c:2:34: unsupported C: '&x' other than as an argument of a call to a function of the file
// ERR-NOT:     Traceback
