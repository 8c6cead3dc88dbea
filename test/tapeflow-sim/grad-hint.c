// A .c file gives the primal only: asking it for the gradient says how to get one.
// REQUIRES: libclang
// RUN: not tapeflow-sim %s --entry sq_grad --args 1.0 2>&1 | filecheck %s
// CHECK: error: no function @sq_grad in the module (it defines @sq); @sq_grad is made by tapeflow-opt
// CHECK-NOT: Traceback

double sq(double x) { return x * x; }

void driver(double x) { __enzyme_autodiff((void *)sq, x); }
