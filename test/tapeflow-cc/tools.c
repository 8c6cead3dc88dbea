// Every tool takes a .c file directly (the frontend runs first): tapeflow-opt's full
// pipeline, tapeflow-run on the primal and the gradient, tapeflow-sim's report.
// REQUIRES: libclang
// RUN: tapeflow-opt %s --tapeflow | filecheck %s --check-prefix=OPT
// RUN: tapeflow-run %s --entry dot --args 3 | filecheck %s --check-prefix=PRIMAL
// RUN: tapeflow-opt %s --tapeflow-autodiff -o %t.mlir
// RUN: tapeflow-run %t.mlir --entry dot_grad --args 3 1.0 | filecheck %s --check-prefix=GRAD
// RUN: tapeflow-sim %s --entry dot --args 3 | filecheck %s --check-prefix=SIM

double dot(double x[3], double y[3], int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s * s;
}

void driver(double *x, double *dx, double *y, double *dy) {
  __enzyme_autodiff((void *)dot, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, 3);
}

// OPT:  func.func @dot_grad(
// PRIMAL: result[0]: f64 =
// GRAD: arg[1]: memref<3xf64> =
// GRAD: arg[3]: memref<3xf64> =
// SIM:  cycles:

// Run-time errors point at the C line, also after the pipeline when tapeflow-opt prints
// the locations (--print-debuginfo):
// RUN: not tapeflow-run %s --entry dot --args 5 2>&1 | filecheck %s --check-prefix=OOB
// RUN: tapeflow-opt %s --tapeflow --print-debuginfo | not tapeflow-run - --entry dot_grad --args 5 1.0 2>&1 | filecheck %s --check-prefix=OOB
// OOB: error: {{.*}}tools.c:13:10: 'memref.load' index [3] out of bounds for memref of shape [3]
