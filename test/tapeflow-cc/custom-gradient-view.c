// A function with a custom gradient called on a pointer into an array (`&a[i]`, `a + i`)
// calls its variant `f_at<k>` (pointer-views.c), which has the custom gradient too: the
// attributes name variants of the augment and the gradient in which the pointer and its
// shadow are views at the one offset, passed after the arguments that mirror f's (where
// tapeflow-autodiff passes it: before the result's adjoint). Both custom gradients here
// differ from the derivative (straight through the clip where it saturates, -1 for 2 * x),
// so a re-derived one would show in the gradient.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function g | filecheck %s
// RUN: tapeflow-cc %s --function g | tapeflow-opt -p tapeflow-autodiff | filecheck %s --check-prefix=AD
// RUN: tapeflow-cc %s --function g -o %t.mlir
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff | tapeflow-run - -e g_grad --args 0.25 2.0 -3.0 1.0 > %t-ad.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow -o %t-tf.mlir
// RUN: tapeflow-run %t-tf.mlir -e g_grad --args 0.25 2.0 -3.0 1.0 > %t-tf.txt
// RUN: tapeflow-exec %t-tf.mlir -e g_grad --args 0.25 2.0 -3.0 1.0 > %t-native.txt
// RUN: diff %t-ad.txt %t-tf.txt
// RUN: diff %t-ad.txt %t-native.txt
// RUN: filecheck %s --check-prefix=VALUE < %t-ad.txt

#include <math.h>
#include <stdlib.h>

double __enzyme_autodiff(void *, ...);

void clip(double *y, const double *x) { *y = fmin(fmax(*x, -1.0), 1.0); }
void *aug_clip(double *y, double *d_y, const double *x, double *d_x) {
  clip(y, x);
  return 0;
}
void rev_clip(double *y, double *d_y, const double *x, double *d_x, void *tape) {
  *d_x += *d_y;
  *d_y = 0.0;
}
void *__enzyme_register_gradient_clip[3] = {(void *)clip, (void *)aug_clip, (void *)rev_clip};

double twice(const double *x) { return 2.0 * *x; }
double aug_twice(const double *x, double *d_x) { return 2.0 * *x; }
void rev_twice(const double *x, double *d_x, double d) { *d_x += -d; }
void *__enzyme_register_gradient_twice[3] = {(void *)twice, (void *)aug_twice,
                                             (void *)rev_twice};

// dg/da_i = 2 clip(a_i) * 1 - 1: -0.5, 1.0, -3.0 (re-derived: 2.5, 2.0, 2.0).
double g(double a0, double a1, double a2) {
  double *a = malloc(3 * sizeof(double)); // (a local array would be a memref.cast away)
  a[0] = a0;
  a[1] = a1;
  a[2] = a2;
  double s = 0.0;
  for (int i = 0; i < 3; i++) {
    double c;
    clip(&c, &a[i]);
    s += c * c + twice(a + i);
  }
  free(a);
  return s;
}

int main(void) { return (int)__enzyme_autodiff((void *)g, 0.25, 2.0, -3.0); }

// CHECK:     func.call @clip_at1(%{{.*}}, %{{.*}}, %i)
// CHECK:     func.call @twice_at0(%{{.*}}, %i)
// CHECK:     func.func @clip_at1({{.*}}, %x_offset: index{{.*}} attributes {enzyme_augment = @aug_clip_at2_with_shadows, enzyme_gradient = @rev_clip_at2_with_shadows}
// CHECK:     func.func @aug_clip_at2_with_shadows(%y: memref<?xf64>{{.*}}, %d_y: memref<?xf64>{{.*}}, %x: memref<?xf64>{{.*}}, %d_x: memref<?xf64>{{.*}}, %x_offset: index
// CHECK:     func.func @rev_clip_at2_with_shadows(%y: memref<?xf64>{{.*}}, %d_y: memref<?xf64>{{.*}}, %x: memref<?xf64>{{.*}}, %d_x: memref<?xf64>{{.*}}, %x_offset: index
// CHECK:       memref.load %d_x[%x_offset]
// CHECK:     func.func @twice_at0({{.*}}, %x_offset: index{{.*}} attributes {enzyme_augment = @aug_twice_at0_with_shadows, enzyme_gradient = @rev_twice_at0_with_shadows}
// CHECK:     func.func @aug_twice_at0_with_shadows(%x: memref<?xf64>{{.*}}, %d_x: memref<?xf64>{{.*}}, %x_offset: index
// CHECK:     func.func @rev_twice_at0_with_shadows(%x: memref<?xf64>{{.*}}, %d_x: memref<?xf64>{{.*}}, %x_offset: index{{.*}}, %d: f64

// AD:        func.func @g_grad(
// AD:          func.call @aug_clip_at2_with_shadows(
// AD:          func.call @aug_twice_at0_with_shadows(
// AD:          func.call @rev_twice_at0_with_shadows(
// AD:          func.call @rev_clip_at2_with_shadows(
// AD:          func.return

// VALUE:     result[0]: f64 = -0.5
// VALUE:     result[1]: f64 = 1.0
// VALUE:     result[2]: f64 = -3.0
