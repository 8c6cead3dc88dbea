// RUN: not tapeflow-opt %s -p tapeflow-autodiff --split-input-file 2>&1 | filecheck %s
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{policy=fast}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{functions=nope}' 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not tapeflow-opt %s -p tapeflow-autodiff -o %t.out 2>&1 | filecheck %s
// RUN: not test -e %t.out

// An active op with no adjoint rule (a view copied from): the diagnostic names the op;
// nothing printed, no traceback.
func.func @f(%x: memref<4xf64>, %y: memref<1x4xf64>) attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %d = "memref.expand_shape"(%x) <{reassociation = [[0, 1]], static_output_shape = array<i64: 1, 4>}> : (memref<4xf64>) -> memref<1x4xf64>
  "memref.copy"(%d, %y) : (memref<1x4xf64>, memref<1x4xf64>) -> ()
  func.return
}

// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors.mlir:11:3: 'memref.expand_shape' cannot be differentiated
// CHECK-NOT: func.func
// CHECK-NOT: Traceback

// POLICY-NOT: Traceback
// POLICY: error: pass-pipeline:1:19: option 'policy' of tapeflow-autodiff: unknown policy 'fast' (expected one of min-tape, cache-all)
// FUNC-NOT: Traceback
// FUNC: error: pass-pipeline:1:19: option 'functions' of tapeflow-autodiff: no function named 'nope' in the module
