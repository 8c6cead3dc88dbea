// Counted loops that are not `for (i = a; i < b; i += c)` are scf.for too, so regions,
// layers and streaming apply to them: a down-counting loop `for (j = hi; j >= lo; j -= s)`
// runs the normalised index k = 0, s, 2s, ... below hi - lo + 1 with j = hi - k; a test
// `i + 1 < n` is `i < n - 1` (exact in 64-bit index arithmetic: the bound may be -1),
// `i + 2 <= n` is `i < n - 1`;
// `>`/`!=` end one before the bound; a counter read after its loop is its final value
// (max(lb, ub) by one, else lb + ceil(max(ub - lb, 0) / step) * step).
// REQUIRES: libclang
// RUN: tapeflow-cc -O0 %s | filecheck %s

double f(double *x, int n) {
  double s = 0.0;
  for (int j = n - 1; j >= 0; j--)
    s += x[j];
  return s;
}

// CHECK-LABEL: func.func @f(
// CHECK-DAG:   %[[S0:[a-zA-Z0-9_]+]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:   %[[ONE:[a-zA-Z0-9_]+]] = arith.constant 1 : index
// CHECK-DAG:   %[[ZERO:[a-zA-Z0-9_]+]] = arith.constant 0 : index
// CHECK:       %[[HI:[a-zA-Z0-9_]+]] = arith.subi %n, %[[ONE]] : index
// CHECK-NEXT:  %[[SPAN:[a-zA-Z0-9_]+]] = arith.addi %[[HI]], %[[ONE]] : index
// CHECK-NEXT:  %[[R:[a-zA-Z0-9_]+]] = scf.for %j_k = %[[ZERO]] to %[[SPAN]] step %[[ONE]] iter_args(%[[ACC:[a-zA-Z0-9_]+]] = %[[S0]]) -> (f64) {
// CHECK-NEXT:    %j = arith.subi %[[HI]], %j_k : index
// CHECK-NEXT:    %[[V:[a-zA-Z0-9_]+]] = memref.load %x[%j] : memref<?xf64>
// CHECK-NEXT:    %[[N:[a-zA-Z0-9_]+]] = arith.addf %[[ACC]], %[[V]] : f64
// CHECK-NEXT:    scf.yield %[[N]] : f64
// CHECK:       func.return %[[R]] : f64

double g(double *x, int n, int lo) {
  double s = 0.0;
  for (int j = n; j > lo; j -= 3)
    s += x[j];
  for (int i = n; i != 2; --i)
    s *= x[i];
  return s;
}

// CHECK-LABEL: func.func @g(
// CHECK-DAG:   %[[THREE:[a-zA-Z0-9_]+]] = arith.constant 3 : index
// CHECK-DAG:   %[[TWO:[a-zA-Z0-9_]+]] = arith.constant 2 : index
// CHECK:       %[[SPAN:[a-zA-Z0-9_]+]] = arith.subi %n, %lo : index
// CHECK-NEXT:  scf.for %j_k = %{{.*}} to %[[SPAN]] step %[[THREE]] iter_args(
// CHECK-NEXT:    %j = arith.subi %n, %j_k : index
// CHECK:       %[[SPAN2:[a-zA-Z0-9_]+]] = arith.subi %n, %[[TWO]] : index
// CHECK-NEXT:  scf.for %i_k = %{{.*}} to %[[SPAN2]] step %{{.*}} iter_args(
// CHECK-NEXT:    %i = arith.subi %n, %i_k : index

double h(double *x, unsigned long n) {
  double s = 0.0;
  for (unsigned long i = 1; i + 1 < n; i++)
    s += x[i];
  for (long i = 0; i + 2 <= n; i += 2)
    s += x[i];
  for (unsigned long k = n; k > 0; k--)
    s += x[k - 1];
  return s;
}

// CHECK-LABEL: func.func @h(
// CHECK:       %[[UB:[a-zA-Z0-9_]+]] = arith.subi %n, %[[ONE:[a-zA-Z0-9_]+]] : index
// CHECK-NEXT:  scf.for %i = %[[ONE]] to %[[UB]] step %[[ONE]] iter_args(
// CHECK:       %[[UB2:[a-zA-Z0-9_]+]] = arith.subi %n, %[[ONE]] : index
// CHECK-NEXT:  scf.for %i_{{[0-9]+}} = %{{.*}} to %[[UB2]] step %{{.*}} iter_args(
// CHECK:       scf.for %k_k = %{{.*}} to %n step %[[ONE]] iter_args(
// CHECK-NEXT:    %k = arith.subi %n, %k_k : index
// CHECK-NOT:   scf.while

double last(double *x, int n) {
  int i, j;
  double s = 0.0;
  for (i = 0; i < n; i++)
    s += x[i];
  for (j = n; j > 2; j -= 3)
    s += x[j];
  return s + x[i - 1] + x[j];
}

// CHECK-LABEL: func.func @last(
// CHECK:       %[[JS:[a-zA-Z0-9_]+]] = arith.subi %n, %[[TWO:[a-zA-Z0-9_]+]] : index
// CHECK:       %[[I:[a-zA-Z0-9_]+]] = arith.maxsi %{{.*}}, %n : index
// CHECK-NEXT:  %[[IM1:[a-zA-Z0-9_]+]] = arith.subi %[[I]], %{{.*}} : index
// CHECK-NEXT:  memref.load %x[%[[IM1]]]
// CHECK:       %[[P:[a-zA-Z0-9_]+]] = arith.maxsi %[[JS]], %{{.*}} : index
// CHECK-NEXT:  %[[T:[a-zA-Z0-9_]+]] = arith.ceildivsi %[[P]], %[[THREE:[a-zA-Z0-9_]+]] : index
// CHECK-NEXT:  %[[M:[a-zA-Z0-9_]+]] = arith.muli %[[T]], %[[THREE]] : index
// CHECK-NEXT:  %j_{{[0-9]+}} = arith.subi %n, %[[M]] : index

// A variable step `s` the body does not write is `max(s, 1)` (a C loop with s <= 0 that
// runs at all never ends); `j -= t` counts down by `max(t, 1)`:
double strided(double *x, int n, int s, int t) {
  double r = 0.0;
  for (int i = 0; i < n; i += s)
    r += x[i];
  for (int j = n - 1; j >= 0; j -= t)
    r *= x[j];
  return r;
}

// CHECK-LABEL: func.func @strided(
// CHECK:       %[[S:[a-zA-Z0-9_]+]] = arith.maxsi %s, %[[ONE:[a-zA-Z0-9_]+]] : index
// CHECK-NEXT:  scf.for %i = %{{.*}} to %n step %[[S]] iter_args(
// CHECK:       %[[T:[a-zA-Z0-9_]+]] = arith.maxsi %t, %[[ONE]] : index
// CHECK-NEXT:  scf.for %j_k = %{{.*}} to %{{.*}} step %[[T]] iter_args(
// CHECK-NEXT:    %j = arith.subi %{{.*}}, %j_k : index
