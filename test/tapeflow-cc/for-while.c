// Loops that are not canonical (counter going down, bound written in the body) become
// scf.while with the counter and the written scalars as loop-carried values.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, int n) {
  double s = 0.0;
  for (int i = n - 1; i >= 0; i--)
    s += x[i];
  int m = n;
  for (int j = 0; j < m; j++) {
    s *= 0.5;
    m = m - 1;
  }
  return s;
}

// CHECK:      %{{.*}}, %{{.*}} = scf.while (%[[S:[a-zA-Z0-9_]+]] = %{{.*}}, %[[I:[a-zA-Z0-9_]+]] = %{{.*}}) : (f64, index) -> (f64, index)
// CHECK:        %[[C:[a-zA-Z0-9_]+]] = arith.cmpi sge, %[[I]], %{{.*}} : index
// CHECK-NEXT:   scf.condition(%[[C]]) %[[S]], %[[I]] : f64, index
// CHECK-NEXT: } do {
// CHECK-NEXT: ^{{.*}}(%[[S2:[a-zA-Z0-9_]+]]: f64 {{.*}}, %[[I2:[a-zA-Z0-9_]+]]: index {{.*}}):
// CHECK-NEXT:   %[[V:[a-zA-Z0-9_]+]] = memref.load %x[%[[I2]]] : memref<?xf64>
// CHECK-NEXT:   %[[S3:[a-zA-Z0-9_]+]] = arith.addf %[[S2]], %[[V]] : f64
// CHECK:        %[[I3:[a-zA-Z0-9_]+]] = arith.subi %[[I2]], %{{.*}} : index
// CHECK-NEXT:   scf.yield %[[S3]], %[[I3]] : f64, index
// CHECK:      scf.while ({{.*}}) : (f64, index, index) -> (f64, index, index)
// CHECK:        arith.cmpi slt
// CHECK-NOT:  scf.for
