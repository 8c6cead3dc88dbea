// break and continue are structured with i1 flags: after a statement that may jump, the
// rest of the iteration runs under `if (go)`; a loop with `break` is an scf.while whose
// test is `running && cond`, and a for loop's increment runs only while running.
// A loop with only `continue` stays an scf.for.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    if (x[i] < 0.0)
      continue;
    s += x[i];
  }
  for (int i = 0; i < n; i++) {
    if (s > 10.0)
      break;
    s *= 2.0;
  }
  return s;
}

// CHECK-DAG:  %[[TRUE:[a-zA-Z0-9_]+]] = arith.constant true
// CHECK-DAG:  %[[FALSE:[a-zA-Z0-9_]+]] = arith.constant false
// CHECK:      scf.for %i = %{{.*}} to %n step %{{.*}} iter_args(%[[S:[a-zA-Z0-9_]+]] = %{{.*}}) -> (f64) {
// CHECK:        %[[GO:[a-zA-Z0-9_]+]] = scf.if %{{.*}} -> (i1) {
// CHECK-NEXT:     scf.yield %[[FALSE]] : i1
// CHECK-NEXT:   } else {
// CHECK-NEXT:     scf.yield %[[TRUE]] : i1
// CHECK:        scf.if %[[GO]] -> (f64) {
// CHECK:          memref.load %x[%i]
// CHECK:      scf.while ({{.*}}, %[[LIVE:[a-zA-Z0-9_]+]] = %[[TRUE]]) : (f64, index, i1) -> (f64, index, i1)
// CHECK:        %[[LT:[a-zA-Z0-9_]+]] = arith.cmpi slt
// CHECK-NEXT:   %[[C:[a-zA-Z0-9_]+]] = arith.andi %[[LIVE]], %[[LT]] : i1
// CHECK-NEXT:   scf.condition(%[[C]])
// CHECK:        scf.yield %[[FALSE]], %[[FALSE]] : i1, i1
// CHECK:        arith.mulf
// CHECK:        scf.if %{{.*}} -> (index) {
// CHECK-NEXT:     arith.addi
