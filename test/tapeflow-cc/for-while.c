// Loops that are not counted stay scf.while, with the counter and the written scalars as
// loop-carried values: a bound the body writes, an unsigned counter going down to a bound
// that may be zero (it wraps below zero, so `k >= lo` may never fail, as in C), an
// unsigned counter going down by two to `k > 0` (it may step over zero and wrap), a
// variable step of a counter compared unsigned (`i < n`, n unsigned: with s <= 0 it may
// wrap round and end). A down-counting loop whose count is known when it starts, or a
// variable step of a signed one, is an scf.for (for-down.c).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double *x, unsigned long n, unsigned long lo, int s) {
  double r = 0.0;
  int m = n;
  for (int j = 0; j < m; j++) {
    r *= 0.5;
    m = m - 1;
  }
  for (unsigned long k = n; k >= lo; k--)
    r += x[k];
  for (unsigned long k = n; k > 0; k -= 2)
    r += x[k];
  for (int i = 0; i < n; i += s)
    r += x[i];
  return r;
}

// CHECK-NOT:  scf.for
// CHECK:      scf.while ({{.*}}) : (f64, index, index) -> (f64, index, index)
// CHECK:        arith.cmpi slt
// CHECK:        %[[M:[a-zA-Z0-9_]+]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:      %[[R:[a-zA-Z0-9_]+]], %{{.*}} = scf.while (%[[S:[a-zA-Z0-9_]+]] = %{{.*}}, %[[K:[a-zA-Z0-9_]+]] = %n) : (f64, index) -> (f64, index)
// CHECK-NEXT:   %[[C:[a-zA-Z0-9_]+]] = arith.cmpi uge, %[[K]], %lo : index
// CHECK-NEXT:   scf.condition(%[[C]]) %[[S]], %[[K]] : f64, index
// CHECK:      scf.while ({{.*}}) : (f64, index) -> (f64, index)
// CHECK-NEXT:   arith.cmpi ugt
// CHECK:      scf.while ({{.*}}) : (f64, index) -> (f64, index)
// CHECK-NEXT:   arith.cmpi slt
// CHECK-NOT:  scf.for
