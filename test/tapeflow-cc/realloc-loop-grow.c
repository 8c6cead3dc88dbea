// `p = realloc(p, size)` in a counted `for` loop at the function's top level (a buffer
// grown as the loop runs, Enzyme's forrealloc.c): one `memref.alloc` before the loop, of
// the largest size the loop asks for (an `scf.for` of the sizes, a function of the
// counter and of what the loop does not write), and the old buffer's elements copied
// into it when `p` held one (the size is at least that one's: a loop that does not run
// keeps it whole); the realloc calls in the loop are no-ops. The gradient of
// x[n-1] = n * inp is n: 6 at n = 6. A size the loop computes (a doubled capacity) and
// realloc in a `while` loop stay refused, one located line each.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry grow_grad --args 1.5 6 1.0 | filecheck %s --check-prefix=VAL
// RUN: not tapeflow-cc %S/Inputs/realloc-loop.c 2>&1 | filecheck %s --check-prefix=DOUBLED
// RUN: not tapeflow-cc %S/Inputs/realloc-while.c 2>&1 | filecheck %s --check-prefix=WHILE
#include <stdlib.h>

float __enzyme_autodiff(void *, float, int);
double __enzyme_autodiff_d(void *, double, int);

float grow(float inp, int n) {
  float *x = 0;
  for (int i = 0; i < n; i++) {
    x = (float *)realloc(x, (i + 1) * sizeof(float));
    x[i] = i == 0 ? inp : x[i - 1] + inp;
  }
  float res = x[n - 1];
  free(x);
  return res;
}

double twice(double a, int n) {
  double *y = malloc(2 * sizeof(double));
  y[0] = a;
  y[1] = a * a;
  for (int i = 2; i < n; i++) {
    y = realloc(y, (i + 1) * sizeof(double));
    y[i] = y[i - 1] * y[0];
  }
  double r = y[n - 1];
  free(y);
  return r;
}

float dgrow(float inp) { return __enzyme_autodiff((void *)grow, inp, 6); }
double dtwice(double a) { return __enzyme_autodiff_d((void *)twice, a, 5); }

// CHECK:     func.func @grow(%inp: f32{{.*}}, %n: index{{.*}}) -> f32
// CHECK:       %[[CAP:.*]] = scf.for %[[I:.*]] = %{{.*}} to %n step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}) -> (index) {
// CHECK-NEXT:    %[[SIZE:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:    %[[MAX:.*]] = arith.maxsi %[[M]], %[[SIZE]] : index
// CHECK-NEXT:    scf.yield %[[MAX]] : index
// CHECK:       %x = memref.alloc(%[[CAP]]) : memref<?xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for %i =
// CHECK-NOT:   memref.alloc
// CHECK:       memref.dealloc %x : memref<?xf32>
// CHECK:     func.func @twice(
// CHECK:       %y = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK:       %[[OLD:.*]] = memref.dim %y, %{{.*}} : memref<?xf64>
// CHECK-NEXT:  %[[CAP2:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[OLD]]) -> (index) {
// CHECK:       %[[NEW:.*]] = memref.alloc(%[[CAP2]]) : memref<?xf64>
// CHECK-NEXT:  %[[KEPT:.*]] = arith.minsi %[[OLD]], %[[CAP2]] : index
// CHECK-NEXT:  scf.for
// CHECK:       memref.dealloc %y : memref<?xf64>
// CHECK:       scf.for %i =
// CHECK-NOT:   memref.alloc
// CHECK:       memref.dealloc %[[NEW]] : memref<?xf64>
// VAL-NOT:   Traceback
// VAL:       result[0]: f32 = 6
// DOUBLED-NOT: Traceback
// DOUBLED:   error: {{.*}}realloc-loop.c:8:22: unsupported C: the size of an allocation of 'p' in a loop depends on what the loop computes (only its counter)
// DOUBLED-NOT: error
// WHILE-NOT: Traceback
// WHILE:     error: {{.*}}realloc-while.c:6:5: unsupported C: realloc of 'p' inside a loop or branch (only at the function's top level, or in a counted for loop there, sized by its counter)
// WHILE-NOT: error
