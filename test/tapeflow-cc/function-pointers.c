// Function pointers to functions of the file: a pointer's value is an `index`, the
// function's number among the file's functions whose address is taken (sq 0, cube 1,
// lin 2 here); a call through a pointer whose value is not known is an `scf.if` chain
// over the functions of its type, each arm a direct `func.call`, so the AD pass sees
// only direct calls. Pointers may be parameters, locals (`&f` or `f`), globals, or the
// entries of a table initialised with function names and never written, indexed by a
// constant (the entry itself) or an integer (a chain of `arith.select`).
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %s | tapeflow-run - --entry demo --args 2 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-cc %S/Inputs/fnptr-table-written.c 2>&1 | filecheck %s --check-prefix=WRITTEN

typedef double (*unary)(double);
static double sq(double a) { return a * a; }
static double cube(double a) { return a * a * a; }
static double lin(double a) { return 3.0 * a; }
static unary table[3] = {sq, cube, lin};

static double apply(unary f, double v) { return f(v) + 1.0; }

double pick(const double *x, int k) {
  unary q = table[k];
  double (*r)(double) = &cube;
  return q(x[0]) + (*r)(x[1]) + table[2](x[2]) + apply(sq, x[1]);
}

double demo(int k) {
  double x[3] = {1.5, -0.5, 2.0};
  return pick(x, k);
}

// CHECK-LABEL: func.func @apply(
// CHECK-SAME:    %f: index
// CHECK:         %[[IS_SQ:.*]] = arith.cmpi eq, %f, %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = scf.if %[[IS_SQ]] -> (f64) {
// CHECK-NEXT:      func.call @sq(%v)
// CHECK:         } else {
// CHECK:           %[[IS_CUBE:.*]] = arith.cmpi eq, %f, %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = scf.if %[[IS_CUBE]] -> (f64) {
// CHECK-NEXT:        func.call @cube(%v)
// CHECK:           } else {
// CHECK-NEXT:        func.call @lin(%v)
// CHECK-LABEL: func.func @pick(
// (table[k]: k == 0 ? 0 : (k == 1 ? 1 : 2))
// CHECK:         %[[K1:.*]] = arith.cmpi eq, %k, %{{.*}} : index
// CHECK-NEXT:    %[[Q1:.*]] = arith.select %[[K1]], %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[K0:.*]] = arith.cmpi eq, %k, %{{.*}} : index
// CHECK-NEXT:    %[[Q:.*]] = arith.select %[[K0]], %{{.*}}, %[[Q1]] : index
// CHECK-NEXT:    arith.cmpi eq, %[[Q]], %{{.*}} : index
// (&cube and table[2]: direct calls; apply(sq, ...) passes sq's number)
// CHECK:         func.call @cube(
// CHECK:         func.call @lin(
// CHECK:         func.call @apply(%{{.*}}, %{{.*}}) : (index, f64) -> f64
// (k = 2: lin(1.5) + cube(-0.5) + lin(2) + sq(-0.5) + 1 = 4.5 - 0.125 + 6 + 1.25)
// OUT:         result[0]: f64 = 11.625
// WRITTEN:     error: {{.*}}fnptr-table-written.c:5:3: unsupported C: writing a function pointer other than a variable (a table entry, a field)
// WRITTEN-NOT: Traceback
