// `assert(e)` in translated code (Enzyme's vecmax.c asserts inside the loop it
// differentiates) is dropped with a remark, as NDEBUG would drop it: its check has no
// derivative and TapeFlow has no abort. (It expands to a call of libc's __assert_fail.)
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f -o %t.mlir 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: filecheck %s < %t.mlir
#include <assert.h>

double f(double *x, int n) {
  double m = x[0];
  for (int i = 1; i < n; i++) {
    assert(i < 100 && "too long");
    m = m > x[i] ? m : x[i];
  }
  assert(m >= x[0]);
  return m;
}

// REMARK: remark: {{.*}}assert.c:12:5: assert in translated code is dropped
// REMARK: remark: {{.*}}assert.c:15:3: assert in translated code is dropped
// CHECK:     func.func @f
// CHECK-NOT: __assert_fail
// CHECK:     scf.if
