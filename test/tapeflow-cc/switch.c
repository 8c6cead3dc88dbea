// `switch` on an integer (issue 23: Enzyme users' code picks a formula by a mode flag):
// a chain of `scf.if`, one per case (`v == a || v == b` for stacked labels), `default`
// the last else; scalars a case assigns are the ifs' results. Cases falling through are
// one arm (switch-fallthrough.c); a `return` in a case that falls through, a `break` in
// the middle of a case, and case ranges are refused.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo --args 2 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-cc %S/Inputs/switch.c 2>&1 | filecheck %s --check-prefix=FALL
// RUN: not tapeflow-cc %S/Inputs/switch-break.c 2>&1 | filecheck %s --check-prefix=BREAK
// RUN: not tapeflow-cc %S/Inputs/switch-range.c 2>&1 | filecheck %s --check-prefix=RANGE

double pick(double x, int mode) {
  double y = 0.0;
  switch (mode) {
  case 0:
    y = x;
    break;
  case 1:
  case 2:
    y = x * x;
    break;
  default:
    y = -x;
  }
  return y;
}

double first(double x, int mode) {
  switch (mode) {
  case 3:
    return x;
  default:
    break;
  }
  return 2.0 * x;
}

double demo(int mode) {
  double s = 0.0;
  for (int i = 0; i < 4; i++) {
    switch ((mode + i) % 3) {
    case 0:
      continue;
    case 1:
      s += 10.0;
      break;
    default:
      s += 1.0;
    }
    s += 100.0;
  }
  return s + pick(3.0, mode) + first(1.0, mode);
}

// CHECK-LABEL: func.func @pick(
// CHECK:         %[[EQ0:.*]] = arith.cmpi eq, %mode, %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = scf.if %[[EQ0]] -> (f64) {
// CHECK:         } else {
// CHECK:           %[[EQ1:.*]] = arith.cmpi eq, %mode, %{{.*}} : index
// CHECK-NEXT:      %[[EQ2:.*]] = arith.cmpi eq, %mode, %{{.*}} : index
// CHECK-NEXT:      %[[EITHER:.*]] = arith.ori %[[EQ1]], %[[EQ2]] : i1
// CHECK-NEXT:      %{{.*}} = scf.if %[[EITHER]] -> (f64) {
// CHECK:             arith.mulf
// CHECK:           } else {
// CHECK:             arith.negf
// CHECK-LABEL: func.func @first(
// CHECK:         scf.if %{{.*}} -> (i1, f64) {
// CHECK-LABEL: func.func @demo(
// CHECK:         scf.for
// (mode 2: i = 0..3 gives (2+i)%3 = 2, 0, 1, 2 -> 1+100, skip, 10+100, 1+100 = 312;
//  pick(3, 2) = 9, first(1, 2) = 2)
// OUT:         result[0]: f64 = 323.0
// FALL:        error: {{.*}}switch.c:2:24: unsupported C: a 'return' or 'continue' in a case that falls through into the next
// FALL-NOT:    Traceback
// BREAK:       error: {{.*}}switch-break.c:4:16: unsupported C: 'break' before the end of a case of a switch
// BREAK-NOT:   Traceback
// RANGE:       error: {{.*}}switch-range.c:1:42: unsupported C: a case range ('case a ... b')
// RANGE-NOT:   Traceback
