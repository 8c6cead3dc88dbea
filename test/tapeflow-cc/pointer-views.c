// Pointer-valued locals into an array (`double *row = a + i*m`, `&a[k]`, a pointer moved
// by `p++`/`p += k`/`p = a + k`): a view, the same memref with an element offset (an
// index the loops carry like any scalar), so every access is one of the array it aliases
// and the AD sees the aliasing exactly (a subview would be a second, "noalias" buffer).
// A view passed to a function calls the callee's variant `g_at<positions>`, which takes
// the offsets as trailing index arguments (inlined, the AD sees the caller's array).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %S/Inputs/view-argument.c | filecheck %s --check-prefix=ARG

double rows(double *a, int n, int m) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double *row = a + i * m;
    for (int j = 0; j < m; j++)
      s += row[j] * a[j];
  }
  return s;
}

double walk(double *a, int n) {
  double *p = a;
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s += *p * *(p + 1);
    p++;
  }
  return s;
}

// CHECK-LABEL: func.func @rows(
// CHECK:         scf.for %i =
// CHECK:           %[[OFF:.*]] = arith.muli %i, %m : index
// CHECK:           scf.for %j =
// CHECK:             %[[IDX:.*]] = arith.addi %[[OFF]], %j : index
// CHECK:             memref.load %a[%[[IDX]]] : memref<?xf64>
// CHECK:             memref.load %a[%j] : memref<?xf64>
// CHECK-LABEL: func.func @walk(
// CHECK:         scf.for %i = {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[P:.*]] = %{{.*}}) -> (f64, index)
// CHECK:           memref.load %a[%[[P]]] : memref<?xf64>
// CHECK:           %[[NEXT:.*]] = arith.addi %[[P]], %{{.*}} : index
// CHECK:           memref.load %a[%[[NEXT]]] : memref<?xf64>
// ARG:         func.call @dot_at0(%a, %n, %n) : (memref<?xf64>, index, index) -> f64
// ARG:         func.func @dot_at0(%x: memref<?xf64> {{.*}}, %n: index {{.*}}, %x_offset: index {{.*}}) -> f64
// ARG:           %[[AT:.*]] = arith.addi %x_offset, %i : index
// ARG:           memref.load %x[%[[AT]]] : memref<?xf64>
