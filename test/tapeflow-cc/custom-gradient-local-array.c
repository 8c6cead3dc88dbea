// A local fixed-size array passed to a kept call: a function with a custom gradient
// (`clip`) and a recursive one (`sumsq`). The C frontend casts the memref<3xf64> to
// memref<?xf64> at the call; the array's shadow is cast the same way and passed after
// it. The custom gradient differs from the derivative (weights 1, 2, 3 instead of the
// clip's 1, 1, 1), so a re-derived one would show in the gradient.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function g -o %t.mlir
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff | filecheck %s --check-prefix=AD
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff | tapeflow-run - -e g_grad --args 0.5 2.0 -3.0 1.0 > %t-ad.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow -o %t-tf.mlir
// RUN: tapeflow-run %t-tf.mlir -e g_grad --args 0.5 2.0 -3.0 1.0 > %t-tf.txt
// RUN: tapeflow-exec %t-tf.mlir -e g_grad --args 0.5 2.0 -3.0 1.0 > %t-native.txt
// RUN: diff %t-ad.txt %t-tf.txt
// RUN: diff %t-ad.txt %t-native.txt
// RUN: filecheck %s --check-prefix=VALUE < %t-ad.txt

#include <math.h>

double __enzyme_autodiff(void *, ...);

void clip(double *y, const double *x) { *y = fmin(fmax(x[0] + x[1] + x[2], -1.0), 1.0); }
void *aug_clip(double *y, double *d_y, const double *x, double *d_x) {
  clip(y, x);
  return 0;
}
void rev_clip(double *y, double *d_y, const double *x, double *d_x, void *tape) {
  d_x[0] += *d_y;
  d_x[1] += 2.0 * *d_y;
  d_x[2] += 3.0 * *d_y;
  *d_y = 0.0;
}
void *__enzyme_register_gradient_clip[3] = {(void *)clip, (void *)aug_clip, (void *)rev_clip};

double sumsq(const double *x, int n) {
  if (n == 0)
    return 0.0;
  return x[n - 1] * x[n - 1] + sumsq(x, n - 1);
}

// c = clip(a0^2 + a1 + a2) = -0.75 (unclipped), g = c^2 + a0^2 + a1^2 + a2^2:
// custom dg/da = 2c (2 a0, 2, 3) + 2a = (-1.5 + 1, -3 + 4, -4.5 - 6) = (-0.5, 1, -10.5)
// (re-derived: (-0.5, 2.5, -7.5)).
double g(double a0, double a1, double a2) {
  double a[3];
  a[0] = a0 * a0;
  a[1] = a1;
  a[2] = a2;
  double c;
  clip(&c, a);
  a[0] = a0;
  return c * c + sumsq(a, 3);
}

int main(void) { return (int)__enzyme_autodiff((void *)g, 0.5, 2.0, -3.0); }

// AD:        func.func @g_grad(
// AD:          %[[D_A:d_a]] = memref.alloca() : memref<3xf64>
// AD-NEXT:     %[[D_CAST:.*]] = "memref.cast"(%[[D_A]]) : (memref<3xf64>) -> memref<?xf64>
// AD:          func.call @aug_clip(%{{.*}}, %{{.*}}, %{{.*}}, %[[D_CAST]])
// AD:          func.call @sumsq_rev(%{{.*}}, %[[D_CAST]],
// AD:          func.call @rev_clip(%{{.*}}, %{{.*}}, %{{.*}}, %[[D_CAST]])
// AD:          func.return

// VALUE:     result[0]: f64 = -0.5
// VALUE:     result[1]: f64 = 1.0
// VALUE:     result[2]: f64 = -10.5
