// Whole-struct copies (Enzyme's mixedstruct1-old.c): `*box = *p` copies the struct a
// parameter points to into one malloc'ed struct field by field: its integer fields are
// loads from the parameter's integer memref, and its pointer field names the
// parameter's own memref (`p->data`), so the call passes that memref; a struct local
// initialised from the malloc'ed struct copies its values. Copying a struct with
// pointer fields into a struct pointer's memory, or binding a pointer field twice, is
// refused with one located line.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: not tapeflow-cc %S/Inputs/struct-copy-into-memory.c 2>&1 | filecheck %s --check-prefix=MEM
// RUN: not tapeflow-cc %S/Inputs/struct-copy-twice.c 2>&1 | filecheck %s --check-prefix=TWICE
#include <stdlib.h>

typedef struct {
  int lo;
  int hi;
  double *data;
} Frame;

double total(Frame *f) {
  double s = 0.0;
  for (int i = f->lo; i < f->hi; i++)
    s += f->data[i];
  return s;
}

double halves(Frame *frame) {
  Frame *left = malloc(sizeof(Frame));
  *left = *frame;
  left->hi = (frame->lo + frame->hi) / 2;
  Frame copy = *left;
  copy.lo = copy.hi;
  copy.hi = frame->hi;
  double r = total(left) + 2.0 * total(&copy);
  free(left);
  return r;
}
// CHECK-LABEL: func.func @halves(%frame_ints: memref<?xi64> {{.*}}, %frame_data: memref<?xf64>
// CHECK:         %[[LO:.*]] = memref.load %frame_ints[%{{.*}}] : memref<?xi64>
// CHECK:         %[[HI:.*]] = memref.load %frame_ints[%{{.*}}] : memref<?xi64>
// CHECK:         func.call @total(%{{.*}}, %frame_data)
// CHECK:         func.call @total(%{{.*}}, %frame_data)
// CHECK-NOT:     memref.dealloc
// MEM: error: {{.*}}struct-copy-into-memory.c:9:3: unsupported C: copying a struct with pointer fields into '* out' (the memory a struct pointer points to: its pointer fields are the caller's)
// TWICE: error: {{.*}}struct-copy-twice.c:11:3: unsupported C: assigning the pointer field 'data' of '* b' (once, at the top level of the block declaring the struct)
