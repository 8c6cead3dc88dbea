// Extern globals declared in a header and defined in the file set (this file, or a file
// it includes) are the definitions' globals: one memref.global each, at its definition's
// location, read and written through memref.get_global; the gradient of the weights
// through them is checked by test_cfront_globals.py. An extern global with no definition
// anywhere is refused with one located line (errors below).
// REQUIRES: libclang
// RUN: tapeflow-cc -I %S/Inputs/extern %s --function f | filecheck %s
// RUN: not tapeflow-cc -I %S/Inputs/extern -DUNDEFINED %s 2>&1 | filecheck %s --check-prefix=ERR
#include "model.h"
#include "weights.c"

#ifndef UNDEFINED
double scale = 2.0;
#endif

double f(double *x) {
  double s = 0.0;
  for (int i = 0; i < 3; i++)
    s += w[i] * x[i];
  scale = scale + 1.0;
  return scale * s;
}

// CHECK-DAG: "memref.global"() <{sym_name = "w", type = memref<3xf64>, initial_value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf64>{{.*}}loc("{{.*}}weights.c":1:8)
// CHECK-DAG: "memref.global"() <{sym_name = "scale", type = memref<1xf64>, initial_value = dense<2.000000e+00> : tensor<1xf64>{{.*}}loc("{{.*}}extern-globals.c":13:8)
// CHECK:     func.func @f
// CHECK-DAG: memref.get_global @w : memref<3xf64>
// CHECK-DAG: memref.get_global @scale : memref<1xf64>
// ERR:       error: {{.*}}extern-globals.c:20:3: unsupported C: the extern global 'scale' (it has no definition in this file)
// ERR-NOT:   Traceback
