// Bad input to the driver: each case exits non-zero with `error:`, a location, no traceback.

// RUN: not tapeflow-opt %S/Inputs/unparsable.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: error: {{.*}}unparsable.mlir:3:{{[0-9]+}}
// PARSE: Operation arith.bogus is not registered
// PARSE-NOT: Traceback

// RUN: not tapeflow-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// PASS: error: pass-pipeline:1:1: unknown pass 'no-such-pass'
// PASS-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPT
// OPT: error: {{.*}}bogus
// OPT-NOT: Traceback

// RUN: not tapeflow-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}does-not-exist.mlir
// MISSING-NOT: Traceback

// A failed run writes no output file.
// RUN: rm -f %t.out && not tapeflow-opt %S/Inputs/unparsable.mlir -o %t.out 2>/dev/null
// RUN: not test -e %t.out

func.func @ok() {
  func.return
}
