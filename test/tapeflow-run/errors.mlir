// Every failure is `error: ...` on stderr, exit status 1, and no Python traceback.

// RUN: not tapeflow-run %s --entry pop_empty 2>&1 | filecheck %s --check-prefix=POP
// POP: error: {{.*}}errors.mlir:[[# @LINE + 4]]:3: 'tape.pop' pop on empty cache
// POP-NOT: Traceback
func.func @pop_empty() -> f64 {
  %c = tape.init : !tape.cache<f64>
  %v = tape.pop %c : !tape.cache<f64>
  func.return %v : f64
}

// RUN: not tapeflow-run %s --entry oob --args 4 2>&1 | filecheck %s --check-prefix=OOB
// OOB: error: {{.*}}errors.mlir:[[# @LINE + 3]]:3: 'memref.load' index [4] out of bounds for memref of shape [4]
// OOB-NOT: Traceback
func.func @oob(%a: memref<4xf64>, %i: index) -> f64 {
  %v = memref.load %a[%i] : memref<4xf64>
  func.return %v : f64
}

// RUN: not tapeflow-run %s --entry nope 2>&1 | filecheck %s --check-prefix=ENTRY
// ENTRY: error: no function @nope in the module (it defines @pop_empty, @oob)
// ENTRY-NOT: Traceback

// RUN: not tapeflow-run %s --entry oob 2>&1 | filecheck %s --check-prefix=NARGS
// NARGS: error: @oob takes 1 scalar argument(s) (index), got 0
// NARGS-NOT: Traceback

// RUN: not tapeflow-run %s --entry oob --args 1.5 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: error: expected an integer of type index, got '1.5'
// TYPE-NOT: Traceback

// RUN: not tapeflow-run %s.missing --entry oob 2>&1 | filecheck %s --check-prefix=FILE
// FILE: error: {{.*}}errors.mlir.missing: no such file
// FILE-NOT: Traceback

// RUN: echo 'func.func @f() { func.return %x : f64 }' | not tapeflow-run - --entry f 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: error: <stdin>:{{[0-9]+}}:{{[0-9]+}}
// PARSE: use of undefined value %x
// PARSE-NOT: Traceback

// RUN: not tapeflow-run %S/Inputs/bad_syntax.mlir --entry f 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: error: {{.*}}bad_syntax.mlir:4:17
// SYNTAX: operand is used with type f32, but has been previously used or defined with type f64
// SYNTAX-NOT: Traceback
