// `#include <cblas.h>` is TapeFlow's own CBLAS subset: each routine is a loop nest in the
// header, translated as any function of the file (its locations are the header's), so the
// AD pass differentiates its loops; the layout and transpose flags pick index strides.
// A CBLAS routine outside the subset is declared, and refused with one located line.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f | filecheck %s
// RUN: tapeflow-cc %s --function f | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry f_grad --args 2.0 1.0 | filecheck %s --check-prefix=GRAD
// RUN: not tapeflow-cc %s --function g 2>&1 | filecheck %s --check-prefix=REFUSED
#include <cblas.h>

// y = A x with A = [[a, 1], [2, a]] (row-major) and x = (1, a): y.y = 4a^2 + (2 + a^2)^2.
// dgemm reads the same storage column-major and transposed: C = A A^T in row-major terms,
// whose trace is A's squared Frobenius norm, 2a^2 + 5.
double f(double a) {
  double A[4] = {a, 1.0, 2.0, a};
  double x[2] = {1.0, a};
  double y[2];
  cblas_dgemv(CblasRowMajor, CblasNoTrans, 2, 2, 1.0, A, 2, x, 1, 0.0, y, 1);
  double C[4];
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, 2, 2, 2, 1.0, A, 2, A, 2, 0.0, C, 2);
  return cblas_ddot(2, y, 1, y, 1) + C[0] + C[3];
}
// CHECK-LABEL: func.func @cblas_dgemv(%layout: index loc("{{.*}}cblas.h":{{[0-9]+}}:{{[0-9]+}}), %TransA: index
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64)
// CHECK:             memref.load %A[%{{.*}}] : memref<?xf64>
// CHECK:             memref.load %X[%{{.*}}] : memref<?xf64>
// CHECK:           scf.if %{{.*}} -> (f64)
// CHECK:           memref.store %{{.*}}, %Y[%{{.*}}] : memref<?xf64>
// CHECK-LABEL: func.func @cblas_dgemm
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for {{.*}} -> (f64)
// CHECK-LABEL: func.func @f(%a: f64
// CHECK:         func.call @cblas_dgemv(
// CHECK:         func.call @cblas_dgemm(

// f = 4a^2 + (2 + a^2)^2 + 2a^2 + 5: f'(2) = 16 + 48 + 8 = 72.
// GRAD: result[0]: f64 = 72.0

double g(double *x) { return cblas_dasum(2, x, 1); }
// REFUSED: error: {{.*}}cblas.c:41:30: unsupported C: 'cblas_dasum' {{.}}TapeFlow's <cblas.h> defines cblas_ddot, cblas_daxpy, cblas_dscal, cblas_dnrm2, cblas_dgemv, cblas_dgemm{{.}}
// REFUSED-NOT: error
