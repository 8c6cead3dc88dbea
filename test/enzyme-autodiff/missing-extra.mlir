// UNSUPPORTED: enzyme
// RUN: not tapeflow-opt %s -p enzyme-autodiff 2>&1 | filecheck %s

// Without the optional extra, enzyme-autodiff says which extra to install.

func.func @f(%x: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%c0] : memref<4xf64>
  func.return %a : f64
}
// CHECK: error: pass-pipeline:1:1: Enzyme-MLIR is not installed: it is TapeFlow's optional extra `enzyme` (`pip install --no-deps enzyme-ad==0.0.16`; scripts/setup installs it)
