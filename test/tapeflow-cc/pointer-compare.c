// Comparing two pointers into one array (`p < end`, `p != end`) compares their element
// offsets (arith.cmpi on index), so a loop walking a pointer to an end pointer is an
// scf.while over the offset; pointers into different arrays are refused with one located
// line.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/pointer-compare-arrays.c 2>&1 | filecheck %s --check-prefix=ERR

double sumsq(double *x, int n) {
  double s = 0.0;
  double *end = x + n;
  for (double *p = x; p < end; p++)
    s += *p * *p;
  return s;
}
// CHECK-LABEL: func.func @sumsq
// CHECK:       scf.while (%{{.*}} = %{{.*}}, %[[OFF:.*]] = %{{.*}}) : (f64, index)
// CHECK-NEXT:    arith.cmpi slt, %[[OFF]], %n : index
// CHECK:         memref.load %x[%{{.*}}] : memref<?xf64>

// ERR:     error: {{.*}}pointer-compare-arrays.c:1:72: unsupported C: comparing pointers into different arrays ('p < end')
// ERR-NOT: Traceback
