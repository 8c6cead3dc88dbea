// Enzyme's custom gradients: `__enzyme_register_gradient_NAME = {f, augment, gradient}`
// gives f the attributes enzyme_augment/enzyme_gradient; tapeflow-autodiff then calls
// them (Enzyme's conventions: a pointer is followed by its shadow, the gradient gets the
// result's adjoint and returns the float arguments' gradients) and never differentiates
// f. The custom gradient here is deliberately not f's derivative (-1 where 2 * x is):
// the gradient says so, the same in every stage and natively.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function g | filecheck %s
// RUN: tapeflow-cc %s --function g | tapeflow-opt -p tapeflow-autodiff | filecheck %s --check-prefix=AD
// RUN: tapeflow-cc %s --function g -o %t.mlir
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff | tapeflow-run - -e g_grad --args 3.0 1.0 > %t-ad.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow -o %t-tf.mlir
// RUN: tapeflow-run %t-tf.mlir -e g_grad --args 3.0 1.0 > %t-tf.txt
// RUN: tapeflow-exec %t-tf.mlir -e g_grad --args 3.0 1.0 > %t-native.txt
// RUN: diff %t-ad.txt %t-tf.txt
// RUN: diff %t-ad.txt %t-native.txt
// RUN: filecheck %s --check-prefix=VALUE < %t-ad.txt

double __enzyme_autodiff(void *, ...);

double f(double x) { return x * x; }
double aug_f(double x) { return x * x; }
double rev_f(double x, double d) { return -d; }

void *__enzyme_register_gradient_f[3] = {(void *)f, (void *)aug_f, (void *)rev_f};

// g(x) = 4 f(x) + x: with the custom gradient, dg/dx = 4 * -1 + 1 = -3 (13 is right).
double g(double x) { return 4.0 * f(x) + x; }

int main(void) { return (int)__enzyme_autodiff((void *)g, 3.0); }

// CHECK:     func.func @f({{.*}} attributes {enzyme_augment = @aug_f, enzyme_gradient = @rev_f}
// CHECK:     func.func @aug_f(
// CHECK:     func.func @rev_f(

// AD:        func.func @g_grad(
// AD:          func.call @aug_f(%x)
// AD-NOT:      func.call @f(
// AD:          func.call @rev_f(%x, %{{.*}})
// AD:          func.return

// VALUE:     result[0]: f64 = -3.0
