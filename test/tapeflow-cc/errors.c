// Anything outside the C subset is `error: file.c:line:col: unsupported C: <what>`, exit 1,
// no traceback, nothing written (not even with -o); Clang's own errors come out the same way.
// REQUIRES: libclang
// RUN: rm -f %t.mlir
// RUN: not tapeflow-cc %S/Inputs/goto.c -o %t.mlir 2>&1 | filecheck %s --check-prefix=GOTO
// RUN: not cat %t.mlir
// RUN: not tapeflow-cc %S/Inputs/union.c 2>&1 | filecheck %s --check-prefix=UNION
// RUN: not tapeflow-cc %S/Inputs/fnptr.c 2>&1 | filecheck %s --check-prefix=FNPTR
// A pointer to a function not defined in the file (a <math.h> one):
// RUN: not tapeflow-cc %S/Inputs/fnptr-local.c 2>&1 | filecheck %s --check-prefix=FNLOCAL
// RUN: not tapeflow-cc %S/Inputs/address-of.c 2>&1 | filecheck %s --check-prefix=ADDR
// RUN: not tapeflow-cc %S/Inputs/syntax.c 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not tapeflow-cc %S/Inputs/global.c 2>&1 | filecheck %s --check-prefix=GLOBAL
// RUN: not tapeflow-cc %S/Inputs/switch.c 2>&1 | filecheck %s --check-prefix=SWITCH
// RUN: not tapeflow-opt %S/Inputs/goto.c --tapeflow 2>&1 | filecheck %s --check-prefix=GOTO
// RUN: not tapeflow-run %S/Inputs/union.c --entry f --args 1.0 2>&1 | filecheck %s --check-prefix=UNION

// GOTO:      error: {{.*}}goto.c:3:70: unsupported C: a backward goto (a loop made of jumps; write a loop)
// GOTO-NOT:  Traceback
// UNION:     error: {{.*}}union.c:2:30: unsupported C: union 'union U' (its fields share memory; use a struct)
// FNPTR:     error: {{.*}}fnptr.c:1:51: unsupported C: a call through a pointer of type 'double (double)': no function of the file of that type has its address taken
// FNLOCAL:   error: {{.*}}fnptr-local.c:2:46: unsupported C: a pointer to 'sin', which is not defined in this file
// FNLOCAL-NOT: Traceback
// ADDR:      error: {{.*}}address-of.c:2:34: unsupported C: '&x' other than as an argument of a call to a function of the file
// SYNTAX:    error: {{.*}}syntax.c:2:13: expected expression
// GLOBAL:    error: {{.*}}global.c:2:22: unsupported C: the extern global 'counter' (it has no definition in this file)
// SWITCH:    error: {{.*}}switch.c:2:24: unsupported C: a 'return' or 'continue' in a case that falls through into the next
