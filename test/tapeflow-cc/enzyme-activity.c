// Enzyme calls that break Enzyme's own rules, or use what TapeFlow does not take, are
// one error naming the argument: an integer cannot be enzyme_dup, a pointer not
// enzyme_out, a float scalar not enzyme_dup; a miscounted call; a marker other than
// enzyme_dup/dupnoneed/const/out (enzyme_width); a struct by value marked enzyme_dup (it
// has no shadow; issue 22: a struct pointer used to say "is an integer" for enzyme_dup;
// struct pointers are accepted, see struct-pointer.c and struct-mixed.c).
// REQUIRES: libclang
// RUN: not tapeflow-cc %S/Inputs/enzyme-dup-int.c 2>&1 | filecheck %s --check-prefix=INT
// RUN: not tapeflow-cc %S/Inputs/enzyme-count.c 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not tapeflow-cc %S/Inputs/enzyme-out-pointer.c 2>&1 | filecheck %s --check-prefix=OUT
// RUN: not tapeflow-cc %S/Inputs/enzyme-dup-scalar.c 2>&1 | filecheck %s --check-prefix=SCALAR
// RUN: not tapeflow-cc %S/Inputs/enzyme-marker.c 2>&1 | filecheck %s --check-prefix=MARKER
// RUN: not tapeflow-cc %S/Inputs/enzyme-struct-dup.c 2>&1 | filecheck %s --check-prefix=STRUCT

// INT:    error: {{.*}}enzyme-dup-int.c:3:63: __enzyme_autodiff: argument 'n' of 'f' is an integer (constant for TapeFlow), so it must be enzyme_const or unannotated, not enzyme_dup
// COUNT:  error: {{.*}}enzyme-count.c:3:3: __enzyme_autodiff: 'f' has 3 parameters, the call gives 2
// OUT:    error: {{.*}}enzyme-out-pointer.c:3:44: __enzyme_autodiff: argument 'x' of 'f' is a pointer: it is enzyme_dup or enzyme_const, not enzyme_out
// SCALAR: error: {{.*}}enzyme-dup-scalar.c:3:54: __enzyme_autodiff: argument 's' of 'f' is a float scalar: it is active (enzyme_out or unannotated) or enzyme_const, not enzyme_dup
// MARKER: error: {{.*}}enzyme-marker.c:5:32: unsupported C: the Enzyme marker 'enzyme_width' in __enzyme_autodiff
// STRUCT: error: {{.*}}enzyme-struct-dup.c:4:44: __enzyme_autodiff: argument 'p' of 'f' is a struct by value: it is active (enzyme_out or unannotated) or enzyme_const, not enzyme_dup
// CHECK-NOT: Traceback
