// RUN: not tapeflow-opt %s -p tapeflow-autodiff --split-input-file 2>&1 | filecheck %s
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{policy=fast}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff{functions=nope}' 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not tapeflow-opt %s -p tapeflow-autodiff -o %t.out 2>&1 | filecheck %s
// RUN: not test -e %t.out

// An active op with no adjoint rule (a cast copied from: prepare folds only its loads,
// stores and dims): the diagnostic names the op; nothing printed, no traceback.
func.func @f(%x: memref<4xf64>, %y: memref<?xf64>) attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %d = "memref.cast"(%x) : (memref<4xf64>) -> memref<?xf64>
  "memref.copy"(%d, %y) : (memref<?xf64>, memref<?xf64>) -> ()
  func.return
}

// CHECK-NOT: Traceback
// CHECK: error: {{.*}}errors.mlir:11:3: 'memref.cast' cannot be differentiated
// CHECK-NOT: func.func
// CHECK-NOT: Traceback

// POLICY-NOT: Traceback
// POLICY: error: pass-pipeline:1:19: option 'policy' of tapeflow-autodiff: unknown policy 'fast' (expected one of min-tape, cache-all)
// FUNC-NOT: Traceback
// FUNC: error: pass-pipeline:1:19: option 'functions' of tapeflow-autodiff: no function named 'nope' in the module
