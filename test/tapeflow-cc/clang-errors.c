// A file Clang rejects gives one located line: Clang's first error (later errors often
// follow from it, and "too many errors emitted" has no location), exit 1.
// REQUIRES: libclang
// RUN: not tapeflow-cc %S/Inputs/clang-errors.c 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     error: {{.*}}clang-errors.c:3:1: unknown type name 'uint64_t'
// CHECK-NOT: error
