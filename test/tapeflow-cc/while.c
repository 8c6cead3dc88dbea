// `while` is scf.while: the test (with its loads) in the before region, the body in the
// after region; a condition may step a scalar (while-countdown.c), not store to memory.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/while-assign.c 2>&1 | filecheck %s --check-prefix=ERR

double f(const double *x) {
  int i = 0;
  double s = 0.0;
  while (x[i] > 0.0) {
    s += x[i];
    i++;
  }
  return s;
}

// CHECK:      scf.while (%[[S:[a-zA-Z0-9_]+]] = %{{.*}}, %[[I:[a-zA-Z0-9_]+]] = %{{.*}}) : (f64, index) -> (f64, index)
// CHECK-NEXT:   %[[V:[a-zA-Z0-9_]+]] = memref.load %x[%[[I]]] : memref<?xf64>
// CHECK:        %[[C:[a-zA-Z0-9_]+]] = arith.cmpf ogt, %[[V]], %{{.*}} : f64
// CHECK-NEXT:   scf.condition(%[[C]]) %[[S]], %[[I]] : f64, index
// CHECK-NEXT: } do {
// CHECK:        scf.yield %{{.*}}, %{{.*}} : f64, index
// ERR: error: {{.*}}while-assign.c:4:11: unsupported C: an assignment to memory in a loop condition
