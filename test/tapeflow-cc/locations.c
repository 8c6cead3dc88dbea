// Every op carries the C file:line:col it comes from, so diagnostics and the simulator's
// per-op reports point at C lines; the printed locations survive a round trip through
// tapeflow-opt.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: tapeflow-opt %t.mlir --tapeflow-autodiff --print-debuginfo | filecheck %s --check-prefix=OPT

double f(double *x) {
  double s = x[0] * x[1];
  return s;
}

// CHECK:      func.func @f
// CHECK:      memref.load %x[%{{.*}}] : memref<?xf64> loc("{{.*}}locations.c":10:14)
// CHECK:      arith.mulf %{{.*}}, %{{.*}} : f64 loc("{{.*}}locations.c":10:14)
// CHECK:      func.return %{{.*}} : f64 loc("{{.*}}locations.c":11:3)
// CHECK:      } loc("{{.*}}locations.c":9:8)
// OPT:        func.func @f_grad
// OPT:        arith.mulf {{.*}} loc("{{.*}}locations.c":10:14)
