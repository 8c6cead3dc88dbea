// Multi-dimensional data through computed offsets (`a[i*n + j]`) and through array
// parameters; `*p` is p[0]; a store converts to the element type (index -> i32).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

void f(double *a, double g[2][3], int *cnt, double *out, int n) {
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      g[i][j] = a[i * n + j];
  *out = g[1][2];
  cnt[0] = n;
}

// CHECK:      %[[Z:[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK:      %[[M:[a-zA-Z0-9_]+]] = arith.muli %i, %n : index
// CHECK-NEXT: %[[O:[a-zA-Z0-9_]+]] = arith.addi %[[M]], %j : index
// CHECK-NEXT: %[[V:[a-zA-Z0-9_]+]] = memref.load %a[%[[O]]] : memref<?xf64>
// CHECK-NEXT: memref.store %[[V]], %g[%i, %j] : memref<2x3xf64>
// CHECK:      %[[G:[a-zA-Z0-9_]+]] = memref.load %g[%{{.*}}, %{{.*}}] : memref<2x3xf64>
// CHECK-NEXT: memref.store %[[G]], %out[%[[Z]]] : memref<?xf64>
// CHECK-NEXT: %[[N32:[a-zA-Z0-9_]+]] = arith.index_cast %n : index to i32
// CHECK-NEXT: memref.store %[[N32]], %cnt[%[[Z]]] : memref<?xi32>
// CHECK-NEXT: func.return
