// Cases of a `switch` that fall through into the next are one arm of the `scf.if`
// chain; inside it each case runs under `if (the switch entered at it or an earlier
// case)`: its labels or an earlier one's, or, once `default` is among them, no later
// case's label. The last case of the arm runs unguarded.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo | filecheck %s --check-prefix=OUT

double terms(double x, int degree) {
  double r = 0.0;
  switch (degree) {
  case 2:
    r += x * x;
  case 1:
    r += x;
    break;
  case 7:
    r = 7.0;
  default:
    r -= 1.0;
  case 5:
    r *= 10.0;
  }
  return r;
}

double demo(void) {
  return terms(3.0, 2) + 100.0 * terms(3.0, 1) + 1000.0 * terms(3.0, 7)
         + 10000.0 * terms(3.0, 5) + 100000.0 * terms(3.0, 4);
}

// CHECK-LABEL: func.func @terms(
// CHECK:         %[[IN2:.*]] = arith.cmpi eq, %degree, %{{.*}} : index
// CHECK-NEXT:    %[[IN1:.*]] = arith.cmpi eq, %degree, %{{.*}} : index
// CHECK-NEXT:    %[[ARM:.*]] = arith.ori %[[IN2]], %[[IN1]] : i1
// CHECK-NEXT:    scf.if %[[ARM]] -> (f64) {
// (entered at case 2: the same test as the arm's first, shared by cse)
// CHECK-NEXT:      %[[SQ:.*]] = scf.if %[[IN2]] -> (f64) {
// CHECK:           arith.addf %[[SQ]], %x : f64
// CHECK:         } else {
// The default's arm: case 7, then default (runs unless entered at 5), then case 5.
// CHECK:           arith.cmpi eq, %degree
// CHECK-NEXT:      scf.if
// CHECK:           %[[AT5:[0-9]+]] = arith.cmpi eq, %degree, %{{.*}} : index
// CHECK-NEXT:      %[[NOT5:.*]] = arith.xori %[[AT5]], %{{.*}} : i1
// CHECK-NEXT:      %[[D:.*]] = scf.if %[[NOT5]] -> (f64) {
// CHECK-NEXT:        arith.subf
// CHECK:           arith.mulf %[[D]], %{{.*}} : f64
// (12 + 100 * 3 + 1000 * 60 + 10000 * 0 + 100000 * -10)
// OUT:         result[0]: f64 = -939688.0
