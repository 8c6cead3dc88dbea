// `while (n--)` and `do { } while (--n > 0)`: a ++/-- (or assignment) of a scalar in a
// loop condition runs in scf.while's before region and the stepped value is carried,
// so the body and the code after the loop see it as C does (n is -1 after `while
// (n--)`). A condition that stores to memory is refused (while.c), and so is one that
// steps a scalar in a loop that breaks (the test would run only while not broken).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-cc %S/Inputs/while-step-break.c 2>&1 | filecheck %s --check-prefix=BREAK

double tail_sum(const double *x, int n) {
  double s = 0.0;
  while (n--)
    s += x[n] * (n + 1);
  return s + n;
}

double product(const double *x, int n) {
  double p = 1.0;
  do {
    p *= x[n - 1];
  } while (--n > 0);
  return p;
}

double demo(void) {
  double x[3] = {2.0, 3.0, 5.0};
  return tail_sum(x, 3) + 100.0 * product(x, 3);
}

// CHECK-LABEL: func.func @tail_sum(
// CHECK:         %[[N:[0-9]+]], %{{[0-9]+}} = scf.while (%[[NA:[0-9]+]] = %n, %[[SA:[0-9]+]] = %{{.*}}) : (index, f64) -> (index, f64) {
// CHECK-NEXT:      %[[STEP:[0-9]+]] = arith.subi %[[NA]], %{{.*}} : index
// CHECK-NEXT:      %[[GO:[0-9]+]] = arith.cmpi ne, %[[NA]], %{{.*}} : index
// CHECK-NEXT:      scf.condition(%[[GO]]) %[[STEP]], %[[SA]] : index, f64
// CHECK:         arith.index_cast %[[N]]
// CHECK-LABEL: func.func @product(
// (cse shares `n - 1` of the body's x[n - 1] and the condition's --n)
// CHECK:         scf.while
// CHECK-NEXT:      %[[DEC:[0-9]+]] = arith.subi
// CHECK:           arith.mulf
// CHECK-NEXT:      %[[MORE:[0-9]+]] = arith.cmpi sgt, %[[DEC]], %{{.*}} : index
// CHECK-NEXT:      scf.condition(%[[MORE]]) %[[DEC]], 
// (2*1 + 3*2 + 5*3 - 1 = 22; 5*3*2 = 30)
// OUT:         result[0]: f64 = 3022.0
// BREAK:       error: {{.*}}while-step-break.c:3:10: unsupported C: an assignment or ++/-- in the condition of a loop that breaks or returns
// BREAK-NOT:   Traceback
