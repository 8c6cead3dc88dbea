// A down-counting back-substitution (rows from the last, the inner loop from i + 1: a
// triangular nest under a down-counting loop) streams: its loops are scf.for (for-down.c),
// so every cache is in a region. They were scf.while, and every cache was "kept in
// Enzyme's layout: pushed or popped inside 'scf.while'". With the cost model (mode=auto,
// accel-salam) the remarks give its decision, with no shape as a reason.
// REQUIRES: libclang
// RUN: tapeflow-opt %s -p 'tapeflow{functions=backsub mode=always}' --remarks 2>&1 | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow{functions=backsub machine=accel-salam}' --remarks 2>&1 | filecheck %s --check-prefix=AUTO

double backsub(double *U, double *b, double *x, int n) {
  for (int i = n - 1; i >= 0; i--) {
    double s = b[i];
    for (int j = i + 1; j < n; j++)
      s -= U[i * n + j] * x[j];
    x[i] = s / U[i * n + i];
  }
  double loss = 0.0;
  for (int i = n - 1; i >= 0; i -= 2)
    loss += x[i] * x[i];
  return loss;
}

// CHECK-NOT:  kept in Enzyme's layout
// CHECK:      remark: {{.*}}for-down-regions.c:14:27: cache of 'x[j]' streamed (mode=always)
// CHECK:      remark: {{.*}}for-down-regions.c:13:5: cache of {{.*}} streamed (mode=always)
// CHECK:      remark: {{.*}}for-down-regions.c:14:27: cache of 'x[j]' in a ragged region
// CHECK-NOT:  kept in Enzyme's layout
// CHECK-NOT:  tape.
// CHECK:      func.func @backsub_grad(
// CHECK:        region.alloc
// CHECK:        stream.commit
// CHECK-NOT:  tape.
// AUTO-NOT:   kept in Enzyme's layout
// AUTO:       remark: {{.*}}for-down-regions.c:14:27: cache of 'x[j]' streamed: trip count known at run time; per tile of {{[0-9]+}} B, misses ~{{[0-9]+}} cycles > streaming ~{{[0-9]+}}
// AUTO-NOT:   kept in Enzyme's layout
