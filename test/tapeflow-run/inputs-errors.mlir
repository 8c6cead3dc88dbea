// Issue #11: bad inputs to tapeflow-run and tapeflow-sim are one `error:` line, exit 1,
// no traceback. Both tools build their arguments the same way (tapeflow.runner).

// RUN: rm -rf %t && mkdir -p %t
// RUN: printf 'PK\003\004 not a zip file' > %t/corrupt.npz
// RUN: python3 -c "import numpy; numpy.savez('%t/complex.npz', arg0=numpy.ones(4) * 1j)"

// A corrupt .npz (zipfile.BadZipFile before).
// RUN: not tapeflow-run %s --entry f --args 0.5 --inputs %t/corrupt.npz 2>&1 | filecheck %s --check-prefix=ZIP
// RUN: not tapeflow-sim %s --entry f --args 0.5 --inputs %t/corrupt.npz 2>&1 | filecheck %s --check-prefix=ZIP
// ZIP: error: {{.*}}corrupt.npz: not a valid .npy/.npz file (File is not a zip file)
// ZIP-NOT: Traceback

// Complex data is not silently cast to f64.
// RUN: not tapeflow-run %s --entry f --args 0.5 --inputs %t/complex.npz 2>&1 | filecheck %s --check-prefix=COMPLEX
// RUN: not tapeflow-sim %s --entry f --args 0.5 --inputs %t/complex.npz 2>&1 | filecheck %s --check-prefix=COMPLEX
// COMPLEX: error: argument 0 (memref<4xf64>) needs real numbers, got complex128

// An argument larger than the machine's memory: how many bytes, and that it is too large.
// RUN: not tapeflow-run %s --entry big 2>&1 | filecheck %s --check-prefix=BIG
// RUN: not tapeflow-sim %s --entry big 2>&1 | filecheck %s --check-prefix=BIG
// BIG: error: {{.*}}inputs-errors.mlir:[[# @LINE + 3]]:1: 'func.func' argument 0 (memref<100000000000xf64>) is too large: it needs 800000000000 bytes
// BIG-NOT: Traceback
// BIG-NOT: MemoryError
func.func @big(%m: memref<100000000000xf64>) {
  func.return
}

// Wrong index count for memref.load: located, in every tool.
// RUN: not tapeflow-run %S/../tapeflow-opt/Inputs/wrong-index-count.mlir 2>&1 | filecheck %s --check-prefix=INDEX
// RUN: not tapeflow-sim %S/../tapeflow-opt/Inputs/wrong-index-count.mlir 2>&1 | filecheck %s --check-prefix=INDEX
// INDEX: error: {{.*}}wrong-index-count.mlir:3:3: 'memref.load' expected an index for each dimension
// INDEX-NOT: Traceback

// A negative scalar after --args is a value in both tools (tapeflow-sim took it for an option).
// RUN: tapeflow-run %s --entry f --args -1e-3 | filecheck %s --check-prefix=NEG
// RUN: tapeflow-sim %s --entry f --args -1e-3 --json --quiet | filecheck %s --check-prefix=NEGSIM
// NEG: result[0]: f64 = -0.00
// NEGSIM: "results"
func.func @f(%m: memref<4xf64>, %x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf64>
  %y = arith.mulf %v, %x : f64
  func.return %y : f64
}

// Integer division by zero is our message, not xDSL's AssertionError.
// RUN: not tapeflow-run %s --entry div --args 7 0 2>&1 | filecheck %s --check-prefix=DIV
// RUN: not tapeflow-sim %s --entry div --args 7 0 --path interp 2>&1 | filecheck %s --check-prefix=DIV
// DIV: error: {{.*}}inputs-errors.mlir:[[# @LINE + 3]]:3: 'arith.divsi' integer division by zero
// DIV-NOT: Assertion
func.func @div(%a: i64, %b: i64) -> i64 {
  %q = arith.divsi %a, %b : i64
  func.return %q : i64
}
