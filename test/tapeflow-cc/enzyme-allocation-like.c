// Enzyme's registration `void *__enzyme_allocation_like[4] = {(void *)alloc, (void *)k,
// (void *)"i,-1", (void *)dealloc}` (its customalloc.c): a call of `alloc` returns new
// memory of `alloc`'s argument k bytes, as malloc does, and `dealloc` frees the pointer
// at the -1 of its index list. Here the call is a `memref.alloc` of that size, `alloc`'s
// body (a bump allocator over a global pool) is not translated nor its pool read, and
// the `dealloc` call is the `memref.dealloc`. The gradient through the memory is that of
// malloc'ed memory: d/dx of 3 x^2 at 2 is 12.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-opt --tapeflow-autodiff | tapeflow-run - --entry test_grad --args 2.0 1.0 | filecheck %s --check-prefix=VAL
// RUN: not tapeflow-cc %S/Inputs/enzyme-allocation-like-bad.c 2>&1 | filecheck %s --check-prefix=BAD
#include <stdlib.h>

double __enzyme_autodiff(void *, ...);

char pool[1024];
int used = 0;

void *bump(char *base, int size, int *off) {
  int at = *off;
  *off += size;
  return base + at;
}

void unbump(int *off, void *p) { *off = 0; }

double *square3(double x) {
  double *m = (double *)bump(pool, 3 * sizeof(double), &used);
  for (int i = 0; i < 3; i++)
    m[i] = x * x;
  return m;
}

double test(double x) {
  double *t = square3(x);
  double s = t[0] + t[1] + t[2];
  unbump(&used, t);
  return s;
}

void *__enzyme_allocation_like[4] = {(void *)bump, (void *)1, (void *)"2,-1", (void *)unbump};

double dtest(double x) { return __enzyme_autodiff((void *)test, x); }

// CHECK-NOT: memref.global
// CHECK-NOT: func.func @bump
// CHECK:     func.func @square3(%x: f64{{.*}}) -> memref<?xf64> {
// CHECK:       %[[THREE:.*]] = arith.constant 3 : index
// CHECK:       %m = memref.alloc(%[[THREE]]) : memref<?xf64>
// CHECK:     func.func @test(
// CHECK:       %[[T:.*]] = func.call @square3(%x)
// CHECK:       memref.dealloc %[[T]] : memref<?xf64>
// CHECK-NOT: func.func @unbump
// VAL-NOT:   Traceback
// VAL:       result[0]: f64 = 12
// BAD-NOT:   Traceback
// BAD:       error: {{.*}}enzyme-allocation-like-bad.c:5:46: unsupported C: deallocation indices without -1 (the freed pointer)
// BAD-NOT:   error
