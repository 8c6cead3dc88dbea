// The C path promotes a scalar kept in a one-element local array to SSA values (what
// mem2reg does before Enzyme): a loop carries it as an iter_arg. One that is read before
// it is written, or written under an `if`, stays in memory. -O0 keeps every buffer.
// An element of a local array that an inner loop reads first and writes at indices the
// loop does not change is carried through that loop (LLVM's LICM promotion at -O3):
// loaded before it, stored after it; one whose index the loop changes stays in memory.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc -O0 %s | filecheck %s --check-prefix=RAW

double promoted(double *x, int n) {
  double acc[1];
  acc[0] = 0.0;
  for (int i = 0; i < n; i++)
    acc[0] += x[i] * x[i];
  double t[1];
  t[0] = x[0];
  t[0] = t[0] * t[0];
  return acc[0] + t[0];
}

double kept(double *x, int n) {
  double u[1];
  double w[1];
  w[0] = 0.0;
  for (int i = 0; i < n; i++) {
    x[i] = u[0];
    if (x[i] > 0.0)
      w[0] = x[i];
  }
  return w[0];
}

double licm(double x[4][8], double out[4]) {
  double act[4];
  double seen[8];
  for (int i = 0; i < 4; i++) {
    act[i] = 1.0;
    for (int j = 0; j < 8; j++) {
      act[i] += x[i][j];
      seen[j] = act[i];
    }
    out[i] = act[i] + seen[i];
  }
  return out[0];
}

// CHECK-LABEL: func.func @promoted
// CHECK-NOT:   memref.alloca
// CHECK:       %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:       %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (f64) {
// CHECK-NEXT:    %[[V:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf64>
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f64
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[A]], %[[SQ]] : f64
// CHECK-NEXT:    scf.yield %[[SUM]] : f64
// CHECK:       %[[X0:.*]] = memref.load
// CHECK-NEXT:  %[[T:.*]] = arith.mulf %[[X0]], %[[X0]] : f64
// CHECK-NEXT:  %[[R:.*]] = arith.addf %[[ACC]], %[[T]] : f64
// CHECK-NEXT:  func.return %[[R]] : f64

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: memref.alloca() : memref<1xf64>

// CHECK-LABEL: func.func @licm
// CHECK:       %[[ACT:.*]] = memref.alloca() : memref<4xf64>
// CHECK:       %[[SEEN:.*]] = memref.alloca() : memref<8xf64>
// CHECK:       memref.store %{{.*}}, %[[ACT]][%[[I:.*]]] : memref<4xf64>
// CHECK-NEXT:  %[[A0:.*]] = memref.load %[[ACT]][%[[I]]] : memref<4xf64>
// CHECK-NEXT:  %[[AN:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[A0]]) -> (f64) {
// CHECK-NOT:     %[[ACT]]
// CHECK:         memref.store %{{.*}}, %[[SEEN]][%[[J]]] : memref<8xf64>
// CHECK:         scf.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.store %[[AN]], %[[ACT]][%[[I]]] : memref<4xf64>

// RAW-LABEL: func.func @promoted
// RAW-COUNT-2: memref.alloca() : memref<1xf64>

// A buffer allocated inside the outer loop is carried through the inner loop only (the
// outer one has nothing outside it to load it before).
double inner(double x[4][8]) {
  double total = 0.0;
  for (int i = 0; i < 4; i++) {
    double row[1][1];
    row[0][0] = 0.0;
    for (int j = 0; j < 8; j++)
      row[0][0] += x[i][j];
    total += row[0][0];
  }
  return total;
}

// CHECK-LABEL: func.func @inner
// CHECK:       scf.for %{{.*}} iter_args
// CHECK-NEXT:    %[[ROW:.*]] = memref.alloca() : memref<1x1xf64>
// CHECK:         %[[R0:.*]] = memref.load %[[ROW]]
// CHECK-NEXT:    %[[RN:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[R0]]) -> (f64) {
// CHECK-NOT:       %[[ROW]]
// CHECK:         }
// CHECK-NEXT:    memref.store %[[RN]], %[[ROW]]
