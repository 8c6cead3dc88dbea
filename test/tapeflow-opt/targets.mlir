// -t lists and takes only the targets that work on TapeFlow's IR (MLIR text); xDSL's
// llvm target wants xDSL's llvm dialect, so `-t llvm` is a usage error with a hint, not
// an internal error.
// RUN: tapeflow-opt --help | filecheck %s --check-prefix=HELP
// RUN: not tapeflow-opt %s -t llvm 2>&1 | filecheck %s --check-prefix=LLVM
// RUN: tapeflow-opt %s -t mlir | filecheck %s

// HELP: Available targets are: mlir{{$}}

// LLVM: error: argument -t/--target: invalid choice: 'llvm' (choose from mlir); to run natively (LLVM through upstream MLIR) use tapeflow-exec
// LLVM-NOT: internal error
// LLVM-NOT: Traceback

// CHECK: func.func @f
func.func @f(%x: f64) -> f64 {
  func.return %x : f64
}
