// RUN: python -c "import sys; n = 24; print('func.func @f(%%a: memref<2xf64>) -> f64 {\n %%c0 = arith.constant 0 : index\n %%c1 = arith.constant 1 : index\n %%x = memref.load %%a[%%c0] : memref<2xf64>'); [print(f' scf.for %%i{k} = %%c0 to %%c1 step %%c1 {{') for k in range(n)]; print(' memref.store %%x, %%a[%%c1] : memref<2xf64>'); [print(' }') for k in range(n)]; print(' func.return %%x : f64\n}')" > %t.deep.mlir
// RUN: tapeflow-sim %t.deep.mlir --json | filecheck %s --check-prefix=DEEP
// RUN: not tapeflow-sim %t.deep.mlir --path fast 2>&1 | filecheck %s --check-prefix=DEEPFAST
// RUN: not tapeflow-sim %s --entry oob --args 1.0 --path fast 2>&1 | filecheck %s --check-prefix=OOB
// RUN: not tapeflow-sim %s --entry oob --args 1.0 --path interp 2>&1 | filecheck %s --check-prefix=OOB
// RUN: tapeflow-sim %s --entry div --args -9223372036854775808 -1 --path fast | filecheck %s --check-prefix=DIV
// RUN: tapeflow-sim %s --entry div --args -9223372036854775808 -1 --path interp | filecheck %s --check-prefix=DIV

// Issue 11, bugs 3 and 5. 24 nested loops exceed Python's 20 statically nested blocks:
// the fast path refuses the module at compile time (one located line) and --path auto
// runs it on the op-by-op path instead of crashing.
// DEEP:         "path": "interp"
// DEEPFAST:     error: {{.*}}deep.mlir:1:1: 'func.func' fast path: the generated Python is beyond Python's limits (SyntaxError: too many statically nested blocks
// DEEPFAST-NOT: builtin.module

// A store at index -1 is out of bounds on both paths (it used to wrap on the fast path),
// with the same one-line message and no IR dump.
// OOB:      error: {{.*}}fast_path_limits.mlir:[[# @LINE + 4]]:3: 'memref.store' index [-1] out of bounds for memref of shape [4]
// OOB-NOT:  func.func
func.func @oob(%a: memref<4xf64>, %x: f64) {
  %m1 = arith.constant -1 : index
  memref.store %x, %a[%m1] : memref<4xf64>
  func.return
}

// INT64_MIN / -1 wraps to INT64_MIN (as LLVM); the remainder is 0.
// DIV: result[0]: i64 = -9223372036854775808
// DIV: result[1]: i64 = 0
func.func @div(%a: i64, %b: i64) -> (i64, i64) {
  %q = arith.divsi %a, %b : i64
  %r = arith.remsi %a, %b : i64
  func.return %q, %r : i64, i64
}
