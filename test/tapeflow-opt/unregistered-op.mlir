// An op nobody registered is reported at its name (xDSL points at the token after it),
// for the custom (bare) and the generic (quoted) spelling, nested or not.
// RUN: not tapeflow-opt %S/Inputs/unregistered-bare.mlir 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not tapeflow-run %S/Inputs/unregistered-bare.mlir 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not tapeflow-opt %S/Inputs/unregistered-generic.mlir 2>&1 | filecheck %s --check-prefix=GENERIC

// BARE: error: {{.*}}unregistered-bare.mlir:1:1: Operation garbage is not registered
// BARE-NEXT: {{^}}  garbage {{[{][{][{]$}}
// BARE-NEXT: {{^}}  ^{{$}}
// BARE-NOT: Traceback

// GENERIC: error: {{.*}}unregistered-generic.mlir:2:8: Operation foo.bar is not registered
// GENERIC-NEXT: {{^}}    %x = "foo.bar"() : () -> i32{{$}}
// GENERIC-NEXT: {{^}}       ^{{$}}
// GENERIC-NOT: Traceback
