// Recursive functions (self and mutual): their calls stay func.call, and the AD keeps
// them so (@f_aug, @f_rev, the tape caches shared by every call, as Enzyme's): the
// gradient's bits are the same interpreted, after tapeflow-lower-tape, through the whole
// pipeline and natively (tapeflow-exec).
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function even | filecheck %s
// RUN: tapeflow-cc %s --function even -o %t.mlir
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff | filecheck %s --check-prefix=AD
// RUN: tapeflow-opt %t.mlir -p tapeflow-autodiff -o %t-ad.mlir
// RUN: tapeflow-run %t-ad.mlir -e even_grad --args 1.3 0.7 6 1.0 > %t-ad.txt
// RUN: tapeflow-opt %t-ad.mlir -p tapeflow-lower-tape | tapeflow-run - -e even_grad --args 1.3 0.7 6 1.0 > %t-lt.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow | tapeflow-run - -e even_grad --args 1.3 0.7 6 1.0 > %t-tf.txt
// RUN: diff %t-ad.txt %t-lt.txt
// RUN: diff %t-ad.txt %t-tf.txt
// RUN: tapeflow-opt %t.mlir -p tapeflow -o %t-tf.mlir
// RUN: tapeflow-exec %t-tf.mlir -e even_grad --args 1.3 0.7 6 1.0 > %t-native.txt
// RUN: diff %t-ad.txt %t-native.txt
// RUN: filecheck %s --check-prefix=VALUES < %t-ad.txt
#include <math.h>

double odd(double x, double y, int n);

double even(double x, double y, int n) {
  if (n == 0)
    return x;
  return x + y / odd(x, y, n - 1);
}

double odd(double x, double y, int n) { return y * sin(x) + 1.0 / even(x * 0.9, y, n - 1); }

// CHECK: func.func @even(
// CHECK:   func.call @odd(
// CHECK: func.func @odd(
// CHECK:   func.call @even(

// AD:      func.func private @even_aug(%x: f64, %y: f64, %n: index, %{{.*}}: !tape.cache<
// AD:        func.call @odd_aug(
// AD:      func.func private @even_rev(%x: f64, %y: f64, %n: index, %seed: f64, %{{.*}}: !tape.cache<{{.*}}) -> (f64, f64)
// AD:        func.call @odd_rev(
// AD:      func.func @even_grad(%{{.*}}: f64, %{{.*}}: f64, %{{.*}}: index, %{{.*}}: f64) -> (f64, f64)
// AD:      func.func private @odd_aug(
// AD:      func.func private @odd_rev(

// VALUES:      result[0]: f64 = {{[-0-9]}}
// VALUES-NEXT: result[1]: f64 = {{[-0-9]}}
