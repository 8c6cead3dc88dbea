// A local array of pointers `T *x[N]` whose rows the function allocates in a counted for
// loop at its top level (`x[i] = malloc(size)` or `posix_memalign((void **)&x[i], a,
// size)`, Enzyme's posix_memalignfor.c): one `memref<?x?xT>` of N rows on the stack (a
// row cannot leave the function: returning it or storing it elsewhere is refused), its
// row length the largest the loop asks for (an `scf.for` of the sizes), allocated before
// the loop; `x[i][j]` and `*x[i]` are its elements, the row allocations and `free(x[i])`
// no-ops (posix_memalign returns 0). A byte size with a constant factor that is a
// multiple of the element size (`8 * (i + 1)` bytes of floats) is that many elements.
// Rows allocated in a while loop, or allocated again (freed, then longer), stay refused,
// one located line each.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry foo_grad --args 1.5 3 1.0 | filecheck %s --check-prefix=VAL
// RUN: not tapeflow-cc %S/Inputs/pointer-array-while.c 2>&1 | filecheck %s --check-prefix=WHILE
// RUN: not tapeflow-cc %S/Inputs/pointer-array-twice.c --function f 2>&1 | filecheck %s --check-prefix=TWICE
#include <stdlib.h>

float __enzyme_autodiff(void *, float, int);

float foo(float inp, int n) {
  float *x[4];
  for (int i = 0; i < 4; i++) {
    posix_memalign((void **)&x[i], 8, 8 * (i + 1));
    *x[i] = inp;
    x[i][1] = inp * i;
  }
  float res = *x[n] + x[n][1];
  for (int i = 0; i < 4; i++)
    free(x[i]);
  return res;
}

float dfoo(float inp) { return __enzyme_autodiff((void *)foo, inp, 3); }

// CHECK:     func.func @foo(%inp: f32{{.*}}, %n: index{{.*}}) -> f32
// CHECK:       %[[LEN:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (index) {
// CHECK:         arith.muli
// CHECK:         arith.maxsi
// CHECK:       %x = memref.alloca(%{{.*}}, %[[LEN]]) : memref<?x?xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for %i =
// CHECK:         memref.store %inp, %x[%i, %{{.*}}] : memref<?x?xf32>
// CHECK:       memref.load %x[%n, %{{.*}}] : memref<?x?xf32>
// CHECK-NOT:   memref.dealloc
// VAL-NOT:   Traceback
// VAL:       result[0]: f32 = 4
// WHILE-NOT: Traceback
// WHILE:     error: {{.*}}pointer-array-while.c:6:5: unsupported C: allocating the rows of an array of pointers other than in a counted for loop at the function's top level
// WHILE-NOT: error
// TWICE-NOT: Traceback
// TWICE:     error: {{.*}}pointer-array-twice.c:6:41: unsupported C: a second allocation of the rows of 'rows' (they are allocated once, in one counted for loop)
// TWICE-NOT: error
