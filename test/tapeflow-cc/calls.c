// Calls between functions of the file are func.call (the AD inlines them); an array
// argument whose type differs from the parameter's (static vs dynamic) gets a memref.cast.
// Only the differentiated function and what it calls are translated.
// REQUIRES: libclang
// RUN: tapeflow-cc %s --function f | filecheck %s

static double sq(double v) { return v * v; }

static void scale(double *a, int n, double s) {
  for (int i = 0; i < n; i++)
    a[i] *= s;
}

static double unused(double v) { return v; }

double f(double x[4]) {
  scale(x, 4, 2.0);
  return sq(x[0]) + sq(x[3]);
}

// CHECK-NOT:  @unused
// CHECK:      func.func @sq(%v: f64 {{.*}}) -> f64 {
// CHECK:      func.func @scale(%a: memref<?xf64> {{.*}}, %n: index {{.*}}, %s: f64 {{.*}}) {
// CHECK:      func.func @f(%x: memref<4xf64> {{.*}}) -> f64 attributes {tapeflow.autodiff} {
// CHECK:        %[[C:[a-zA-Z0-9_]+]] = "memref.cast"(%x) : (memref<4xf64>) -> memref<?xf64>
// CHECK:        func.call @scale(%[[C]], %{{.*}}, %{{.*}}) : (memref<?xf64>, index, f64) -> ()
// CHECK:        func.call @sq(%{{.*}}) : (f64) -> f64
// CHECK-NOT:  @unused
