// Parameter types: array declarations give the memref shape (`double a[N][M]`,
// `double a[][M]`), pointers are one-dimensional dynamic; integer arrays keep their width
// in memory (int -> i32, long/size_t -> i64); integer scalars are index, float f32.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
#include <stddef.h>
#define N 3

double f(double a[N][4], double b[][5], const double *restrict c, const int *idx,
         long *big, size_t n, float s, unsigned u) {
  return a[0][0] + b[1][2] + c[idx[0]] + (double)big[n] + s + u;
}

// CHECK:      func.func @f(%a: memref<3x4xf64> {{.*}}, %b: memref<?x5xf64> {{.*}}, %c: memref<?xf64> {{.*}}, %idx: memref<?xi32> {{.*}}, %big: memref<?xi64> {{.*}}, %n: index {{.*}}, %s: f32 {{.*}}, %u: index {{.*}}) -> f64 {
// CHECK:        %[[I32:[a-zA-Z0-9_]+]] = memref.load %idx[%{{.*}}] : memref<?xi32>
// CHECK-NEXT:   %[[I:[a-zA-Z0-9_]+]] = arith.index_cast %[[I32]] : i32 to index
// CHECK-NEXT:   memref.load %c[%[[I]]] : memref<?xf64>
// CHECK:        %[[B64:[a-zA-Z0-9_]+]] = memref.load %big[%n] : memref<?xi64>
// CHECK-NEXT:   arith.index_cast %[[B64]] : i64 to index
