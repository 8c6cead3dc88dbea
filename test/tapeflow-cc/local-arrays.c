// Local arrays are memref.alloca (initializer lists are stores, missing elements zero);
// a variable-length array gets its size as a dynamic operand.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double x, int n) {
  double m[2][2] = {{x, 1.0}, {2.0}};
  double v[n];
  v[0] = m[0][0] * m[1][1];
  return v[0] + m[1][0];
}

// CHECK:      %[[M:[a-zA-Z0-9_]+]] = memref.alloca() : memref<2x2xf64>
// CHECK:      memref.store %x, %[[M]][%{{.*}}, %{{.*}}] : memref<2x2xf64>
// CHECK:      %[[V:[a-zA-Z0-9_]+]] = memref.alloca(%n) : memref<?xf64>
// CHECK:      memref.load %[[M]][%{{.*}}, %{{.*}}] : memref<2x2xf64>
// CHECK:      memref.store %{{.*}}, %[[V]][%{{.*}}] : memref<?xf64>
