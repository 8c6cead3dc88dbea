// tapeflow-cc's output, locations included, reads back into tapeflow-opt and upstream
// MLIR; scf.while is the case: xDSL 0.74 printed its location before its regions
// (diagnostics.LocatedPrinter prints it once, after the op).
// REQUIRES: libclang
// RUN: tapeflow-cc %s -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: tapeflow-opt %t.mlir --print-debuginfo | filecheck %s

double f(const double *x) {
  int i = 0;
  double s = 0.0;
  while (x[i] > 0.0) {
    s += x[i];
    i++;
  }
  return s;
}

// CHECK:      scf.while ({{.*}}) : (f64, index) -> (f64, index) {
// CHECK:      } do {
// CHECK:      } loc("{{.*}}roundtrip.c":12:3)
