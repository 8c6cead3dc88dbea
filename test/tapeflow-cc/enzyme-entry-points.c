// Enzyme differentiates the calls of every function whose name contains
// __enzyme_autodiff (a prototype per signature: `__enzyme_autodiff_d`), forward mode for
// __enzyme_fwddiff (enzyme-fwddiff.c), split mode for __enzyme_augmentfwd/__enzyme_reverse
// (enzyme-split.c); its other functions (__enzyme_batch, ...) are a located error where
// they are called, not ignored.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s
// RUN: tapeflow-cc %S/Inputs/enzyme-fwddiff.c 2>&1 | filecheck %s --check-prefix=FWD
// RUN: not tapeflow-cc %S/Inputs/enzyme-other-entry.c 2>&1 | filecheck %s --check-prefix=OTHER

extern double __enzyme_autodiff_d(void *, double);

double cube(double x) { return x * x * x; }

int main(void) { return __enzyme_autodiff_d((void *)cube, 2.0) > 0.0; }

// CHECK: func.func @cube(%x: f64 {{.*}}) -> f64 attributes {tapeflow.autodiff}
// FWD-NOT: error
// FWD: func.func @sq(%x: f64 {{.*}}) -> f64 attributes {tapeflow.fwddiff}
// OTHER: error: {{.*}}enzyme-other-entry.c:8:10: unsupported C: the Enzyme function '__enzyme_batch'
