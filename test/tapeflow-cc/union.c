// Unions other than a local union of same-size scalars (union-scalars.c): a local with
// fields of different sizes, a pointer parameter, a field of a struct parameter, are
// refused with one located line: their fields share memory, which the one-memref-per-kind
// layout of structs (struct-integer-fields.c) cannot express; no traceback, no output file.
// REQUIRES: libclang
// RUN: not tapeflow-cc %S/Inputs/union.c 2>&1 | filecheck %s --check-prefix=LOCAL
// RUN: not tapeflow-cc %S/Inputs/union-pointer.c 2>&1 | filecheck %s --check-prefix=POINTER
// RUN: not tapeflow-cc %S/Inputs/union-field.c 2>&1 | filecheck %s --check-prefix=FIELD
// RUN: rm -f %t.mlir
// RUN: not tapeflow-cc %S/Inputs/union-field.c -o %t.mlir 2>&1
// RUN: not cat %t.mlir

// LOCAL:       error: {{.*}}union.c:2:30: unsupported C: union 'union U' (its fields share memory; use a struct)
// LOCAL-NOT:   Traceback
// POINTER:     error: {{.*}}union-pointer.c:3:64: unsupported C: union 'union U' (its fields share memory; use a struct)
// POINTER-NOT: Traceback
// FIELD:       error: {{.*}}union-field.c:2:30: unsupported C: union (unnamed) (its fields share memory; use a struct)
// FIELD-NOT:   error
// FIELD-NOT:   Traceback
