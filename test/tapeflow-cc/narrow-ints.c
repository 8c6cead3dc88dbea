// Arrays of 8- and 16-bit integers (`char`, `short`, `unsigned char`, `_Bool`; a `typedef
// char base;` sequence) are memrefs of i8 and i16 (they were refused): a load extends to
// index, with the sign for signed types and with zeros for unsigned ones (200 stays 200).
// Parameters named `y_1` and `y_2` print as `%y_1_` and `%y_2_` (xDSL takes a trailing
// `_<digits>` for its own suffix: both printed as `%y`), and `--inputs y_1=...` addresses
// them by their C names.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: python -c "import numpy as n; n.save('%t.y1.npy', [1.0, 2.0]); n.save('%t.y2.npy', [10.0, 20.0]); n.save('%t.s.npy', n.array([65, 66], n.int8)); n.save('%t.w.npy', n.array([-300, 7], n.int16)); n.save('%t.u.npy', n.array([200, 1], n.uint8).view(n.int8))"
// RUN: tapeflow-run %s --entry f --inputs y_1=%t.y1.npy --inputs y_2=%t.y2.npy --inputs seq=%t.s.npy --inputs w=%t.w.npy --inputs u=%t.u.npy --args 2 | filecheck %s --check-prefix=OUT

typedef char base;

double f(const double *y_1, const double *y_2, const base *seq, const short *w,
         const unsigned char *u, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += y_1[i] - y_2[i] + (seq[i] == 'A') * w[i] + u[i];
  return s;
}

// CHECK:      func.func @f(%y_1_: memref<?xf64> {{.*}}, %y_2_: memref<?xf64> {{.*}}, %seq: memref<?xi8> {{.*}}, %w: memref<?xi16> {{.*}}, %u: memref<?xi8> {{.*}}, %n: index {{.*}}) -> f64 {
// CHECK:        memref.load %y_1_[%i]
// CHECK:        memref.load %y_2_[%i]
// CHECK:        %[[C:[a-zA-Z0-9_]+]] = memref.load %seq[%i] : memref<?xi8>
// CHECK-NEXT:   arith.index_cast %[[C]] : i8 to index
// CHECK:        %[[W:[a-zA-Z0-9_]+]] = memref.load %w[%i] : memref<?xi16>
// CHECK-NEXT:   arith.index_cast %[[W]] : i16 to index
// CHECK:        %[[U:[a-zA-Z0-9_]+]] = memref.load %u[%i] : memref<?xi8>
// CHECK-NEXT:   %[[UX:[a-zA-Z0-9_]+]] = arith.extui %[[U]] : i8 to i64
// CHECK-NEXT:   arith.index_cast %[[UX]] : i64 to index

// 1 - 10 + 1 * -300 + 200, then 2 - 20 + 0 * 7 + 1:
// OUT: result[0]: f64 = -126.0
// OUT-NEXT: arg[0]: memref<?xf64> = [1.0, 2.0]
// OUT-NEXT: arg[1]: memref<?xf64> = [10.0, 20.0]
