// Enzyme's activity annotations are checked against TapeFlow's calling convention; each
// mismatch is an error naming the argument (float arrays are enzyme_dup, float scalars
// active, integers constant), and a miscounted call is an error too.
// REQUIRES: libclang
// RUN: not tapeflow-cc %S/Inputs/enzyme-const-array.c 2>&1 | filecheck %s --check-prefix=ARRAY
// RUN: not tapeflow-cc %S/Inputs/enzyme-const-scalar.c 2>&1 | filecheck %s --check-prefix=SCALAR
// RUN: not tapeflow-cc %S/Inputs/enzyme-dup-int.c 2>&1 | filecheck %s --check-prefix=INT
// RUN: not tapeflow-cc %S/Inputs/enzyme-count.c 2>&1 | filecheck %s --check-prefix=COUNT

// ARRAY:  error: {{.*}}enzyme-const-array.c:3:46: __enzyme_autodiff: argument 'x' of 'f' is a float array: TapeFlow gives it a shadow, so it must be enzyme_dup, not enzyme_const
// SCALAR: error: {{.*}}enzyme-const-scalar.c:3:82: __enzyme_autodiff: argument 's' of 'f' is a float scalar: TapeFlow makes it active (its gradient is returned), so it must be enzyme_out or unannotated, not enzyme_const
// INT:    error: {{.*}}enzyme-dup-int.c:3:63: __enzyme_autodiff: argument 'n' of 'f' is an integer (constant for TapeFlow), so it must be enzyme_const or unannotated, not enzyme_dup
// COUNT:  error: {{.*}}enzyme-count.c:3:3: __enzyme_autodiff: 'f' has 3 parameters, the call gives 2
