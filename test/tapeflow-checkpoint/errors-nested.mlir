// A marked loop inside another loop, and `loops=` naming no function: one error line,
// exit 1, no traceback.

// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint' 2>&1 | filecheck %s --check-prefix=NEST
// NEST: error: {{.*}}errors-nested.mlir:18:5: 'scf.for' tapeflow-checkpoint: a checkpointed loop must be at the top level of its function
// NEST-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint{loops=g_grad}' 2>&1 | filecheck %s --check-prefix=NAME
// NAME: error: pass-pipeline:1:{{[0-9]+}}: option 'loops' of tapeflow-checkpoint: no function named 'g_grad'
// NAME-NOT: Traceback

func.func @f(%x: memref<4xf64>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      %v = memref.load %x[%j] : memref<4xf64>
      %s = math.sin %v : f64
      memref.store %s, %x[%j] : memref<4xf64>
    } {tapeflow.checkpoint}
  }
  %r = memref.load %x[%c0] : memref<4xf64>
  func.return %r : f64
}
