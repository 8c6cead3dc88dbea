// A local table of one row reached through `*m` (`*m = malloc(...)`, `(*m)[i]`,
// `free(*m)`) is a table of rows as `m[0]` makes it: one dense `memref<?x?xf64>` of one
// row. A row that is another table's row stored into it (`*frame1 = *frame`, Enzyme's
// mixedstruct1.c: a pointer in memory, aliasing the other table) is refused at its line.
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/rows-stored-pointer.c 2>&1 | filecheck %s --check-prefix=STORED
#include <stdlib.h>

double f(const double *x, int n) {
  double **m = malloc(sizeof(double *));
  *m = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++)
    (*m)[i] = x[i] * x[i];
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += m[0][i] * x[i];
  free(*m);
  free(m);
  return s;
}
// CHECK-LABEL: func.func @f(
// CHECK:         %m = memref.alloc(%{{.*}}, %n) : memref<?x?xf64>
// CHECK:         memref.store %{{.*}}, %m[%{{.*}}, %i] : memref<?x?xf64>
// CHECK:         memref.load %m[%{{.*}}, %i_1] : memref<?x?xf64>
// CHECK:         memref.dealloc %m : memref<?x?xf64>
// CHECK-NOT:     memref.dealloc
// STORED: error: {{.*}}rows-stored-pointer.c:5:3: unsupported C: a row of 'copy' that is not malloc'ed (a local 'T **' is a dense 2-D array)
