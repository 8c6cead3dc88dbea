// A view passed as an array parameter (`double a[][M]` given `x + i*M`, `x` a `double *`):
// the callee's variant `g_at<n>` takes the caller's flat memref and the element offset,
// and `a[r][c]` is the load `x[off + r*M + c]`, so the AD sees the caller's array and
// its aliasing exactly (a reinterpret_cast would be a second, "noalias" buffer). A view
// passed on (`rowsum(a, 1)` inside the variant) is a flat view again; `x` itself (no
// offset) passes offset 0. A pointer into a two-dimensional array stays an error.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/view-array-2d.c 2>&1 | filecheck %s --check-prefix=ERR
#define M 3

double rowsum(double a[][M], int r) {
  double s = 0.0;
  for (int i = 0; i < r; i++)
    for (int j = 0; j < M; j++)
      s += a[i][j] * a[i][j];
  return s;
}

double pair(double a[][M]) { return rowsum(a, 2) * a[1][2]; }

double f(double *x, int n) {
  double s = rowsum(x, 1);
  for (int i = 0; i < n - 1; i++)
    s += pair(x + i * M);
  return s;
}

// CHECK:     func.func @f(%x: memref<?xf64> {{.*}}, %n: index {{.*}}) -> f64 {
// CHECK:       func.call @rowsum_at0(%x, %{{.*}}, %{{.*}}) : (memref<?xf64>, index, index) -> f64
// CHECK:       scf.for %i =
// CHECK:         %[[OFF:.*]] = arith.muli %i, %{{.*}} : index
// CHECK:         func.call @pair_at0(%x, %[[OFF]]) : (memref<?xf64>, index) -> f64
// CHECK:     func.func @rowsum_at0(%a: memref<?xf64> {{.*}}, %r: index {{.*}}, %a_offset: index {{.*}}) -> f64 {
// CHECK:         %[[ROW:.*]] = arith.muli %i, %{{.*}} : index
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %a_offset, %[[ROW]] : index
// CHECK-NEXT:    %[[IDX:.*]] = arith.addi %[[AT]], %j : index
// CHECK-NEXT:    memref.load %a[%[[IDX]]] : memref<?xf64>
// CHECK:     func.func @pair_at0(%a: memref<?xf64> {{.*}}, %a_offset: index {{.*}}) -> f64 {
// CHECK:       func.call @rowsum_at0(%a, %{{.*}}, %a_offset) : (memref<?xf64>, index, index) -> f64
// CHECK:       memref.load %a[%{{.*}}] : memref<?xf64>
// ERR:       error: {{.*}}view-array-2d.c:3:44: unsupported C: pointer arithmetic on a multi-dimensional array (index it)
// ERR-NOT:   Traceback
