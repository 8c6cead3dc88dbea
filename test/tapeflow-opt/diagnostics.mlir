// Issue #11: every error is one `error: file:line:col: ...` line (a parse error adds the
// source line and a caret), exit status 1, no traceback, never the whole module.

// xDSL's memref.load verifier raises a bare Exception: located, no traceback, no dump.
// RUN: not tapeflow-opt %S/Inputs/wrong-index-count.mlir 2>&1 | filecheck %s --check-prefix=INDEX
// INDEX: error: {{.*}}wrong-index-count.mlir:3:3: 'memref.load' expected an index for each dimension
// INDEX-NOT: Traceback
// INDEX-NOT: builtin.module

// A verifier error is located at its op and does not print the module.
// RUN: printf '%%s\n' 'func.func @f(%%a: f64) -> f64 {' '  func.return %%a, %%a : f64, f64' '}' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY: error: <stdin>:2:3: 'func.return' Expected arguments to have the same types as the function output types
// VERIFY-NOT: func.func

// An undefined SSA value is located at its use, not at the end of the file.
// RUN: printf '%%s\n' 'func.func @f(%%a: f64) -> f64 {' '  %%x = arith.addf %%a, %%zz : f64' '  func.return %%x : f64' '}' '' '' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=UNDEF
// UNDEF: error: <stdin>:2:23: use of undefined value %zz

// An unterminated string: a linear pre-scan answers at once (xDSL's lexer would take
// exponential time on this line).
// RUN: printf '"%%s\n' aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | not timeout 20 tapeflow-opt - 2>&1 | filecheck %s --check-prefix=STRING
// STRING: error: <stdin>:1:1: unterminated string

// Invalid UTF-8 is located at its byte.
// RUN: printf 'func.func @f() {\n  func.return \377\n}\n' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=UTF8
// UTF8: error: <stdin>:2:15: invalid UTF-8 (byte 0xff)

// Python's integer-string limit becomes our message.
// RUN: python3 -c "print('func.func @f() -> i64 {\n  %%x = arith.constant ' + '9' * 5000 + ' : i64\n  func.return %%x : i64\n}')" | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=DIGITS
// DIGITS: error: <stdin>:2:3: integer literal too long (more than 4300 digits)
// DIGITS-NOT: set_int_max_str_digits

// !tape.cache takes exactly one element type.
// RUN: printf '%%s\n' 'func.func @f(%%c: !tape.cache<>) {' '  func.return' '}' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=CACHE0
// CACHE0: error: <stdin>:1:29: !tape.cache takes one element type (e.g. !tape.cache<f64>), got 0
// RUN: printf '%%s\n' 'func.func @f(%%c: !tape.cache<f64, f64>) {' '  func.return' '}' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=CACHE2
// CACHE2: error: <stdin>:1:29: !tape.cache takes one element type (e.g. !tape.cache<f64>), got 2

// What mlir-opt-22 rejects and xDSL 0.74 accepts: index constants and memref dimensions
// wider than 64 bits, a branch passing f64 to an f32 block argument.
// RUN: printf '%%s\n' 'func.func @f() -> index {' '  %%x = arith.constant 100000000000000000000 : index' '  func.return %%x : index' '}' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=WIDE
// WIDE: error: <stdin>:2:3: 'arith.constant' integer constant 100000000000000000000 out of range for index (64 bits)
// RUN: printf '%%s\n' 'func.func @f(%%m: memref<100000000000000000000xf64>) {' '  func.return' '}' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=DIM
// DIM: error: <stdin>:1:1: 'func.func' memref dimension 100000000000000000000 does not fit in 64 bits
// RUN: printf '%%s\n' 'func.func @f(%%a: f64) -> f32 {' '  cf.br ^bb1(%%a : f64)' '^bb1(%%b: f32):' '  func.return %%b : f32' '}' | not tapeflow-opt - 2>&1 | filecheck %s --check-prefix=BRANCH
// BRANCH: error: <stdin>:2:3: 'cf.br' type mismatch for block argument #0 of successor #0: f64 passed to f32

// A multi-block function (valid upstream) is unsupported by the AD pass, not an internal error.
// RUN: tapeflow-opt %S/Inputs/multi-block.mlir | filecheck %s --check-prefix=MBOK
// MBOK: cf.br
// RUN: not tapeflow-opt %S/Inputs/multi-block.mlir -p tapeflow-autodiff 2>&1 | filecheck %s --check-prefix=MB
// MB: error: {{.*}}multi-block.mlir:1:1: 'func.func' unsupported: multi-block function
// MB-NOT: internal

// Pass options: located in the pipeline, in the spelling typed; `true` is no integer;
// an option given twice is an error; an unknown pass is one line, exit status 1.
// RUN: not tapeflow-opt %s -p 'tapeflow{spm-bytes=true}' 2>&1 | filecheck %s --check-prefix=BOOL
// BOOL: error: pass-pipeline:1:10: option 'spm-bytes' of tapeflow expects int|None, got 'true'
// RUN: not tapeflow-opt %s --tapeflow-layers=spm-bytes=abc 2>&1 | filecheck %s --check-prefix=SPELL
// SPELL: error: pass-pipeline:1:17: option 'spm-bytes' of tapeflow-layers expects int, got 'abc'
// SPELL-NOT: spm_bytes
// RUN: not tapeflow-opt %s -p 'tapeflow{spm-bytes=4096 spm-bytes=8192}' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: error: pass-pipeline:1:25: option 'spm-bytes' of tapeflow given twice
// RUN: not tapeflow-opt %s -p 'tapeflow-layers{bogus=1}' 2>&1 | filecheck %s --check-prefix=UNKOPT
// UNKOPT: error: pass-pipeline:1:17: tapeflow-layers has no option 'bogus' (options: spm-bytes, depth, tile-bytes)
// RUN: not tapeflow-opt %s -p 'tapeflow-layers{spm-bytes=0}' 2>&1 | filecheck %s --check-prefix=RANGE
// RANGE: error: pass-pipeline:1:1: tapeflow-layers: option spm-bytes must be >= 1, got 0
// RUN: not tapeflow-opt %s -p tapeflow-layer 2>&1 | filecheck %s --check-prefix=UNKPASS
// UNKPASS: error: pass-pipeline:1:1: unknown pass 'tapeflow-layer' (did you mean 'tapeflow-layers'?)
// RUN: not tapeflow-opt %s --tapeflow-nothing 2>&1 | filecheck %s --check-prefix=UNKFLAG
// UNKFLAG: error: unknown pass or option '--tapeflow-nothing' (tapeflow-opt --help lists them)
// UNKFLAG-NOT: usage
// RUN: not tapeflow-opt %s --tapeflow-nothing 2>&1 | wc -l | filecheck %s --check-prefix=ONELINE
// ONELINE: {{^ *1$}}

// A missing file reads as in tapeflow-run and tapeflow-sim.
// RUN: not tapeflow-opt %S/Inputs/missing.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}missing.mlir: no such file

func.func @ok(%a: f64) -> f64 {
  func.return %a : f64
}
