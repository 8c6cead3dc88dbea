// A loop under a loop hint (`#pragma nounroll`, `#pragma unroll 4`, `#pragma clang loop
// ...`, as in Enzyme's omp2.c): libclang shows an unexposed statement around the loop,
// which is translated as the loop (an unroll hint is applied: unroll-pragmas.c).
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f | filecheck %s
// RUN: tapeflow-cc %s --function f | tapeflow-opt --tapeflow-autodiff | filecheck %s --check-prefix=GRAD

double f(double *x, int n) {
  double s = 0.0;
#pragma nounroll
  for (int i = 0; i < n; i++)
    s += x[i] * x[i];
#pragma unroll 4
  for (int i = 0; i < n; i++)
    s += x[i];
  int j = 0;
#pragma clang loop vectorize(disable)
  while (j < n) {
    s += 2.0 * x[j];
    j++;
  }
  return s;
}

// CHECK:     func.func @f
// CHECK:     scf.for
// CHECK:     scf.for
// CHECK:     scf.while
// CHECK-NOT: unexposed
// GRAD:      func.func @f_grad
