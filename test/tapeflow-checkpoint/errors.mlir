// Bad options and a marker on something that is not an scf.for: one located error line,
// exit 1, no traceback.

// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint{snapshots=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: error: pass-pipeline:1:{{[0-9]+}}: tapeflow-checkpoint: snapshots must be at least 1, got 0
// ZERO-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint{schedule=linear}' 2>&1 | filecheck %s --check-prefix=SCHED
// SCHED: error: pass-pipeline:1:{{[0-9]+}}: option 'schedule' of tapeflow-checkpoint: unknown schedule 'linear' (expected one of binomial, periodic)
// SCHED-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow{checkpoint=revolve-4}' 2>&1 | filecheck %s --check-prefix=PIPE
// PIPE: error: pass-pipeline:1:{{[0-9]+}}: tapeflow: unknown schedule 'revolve' (expected one of binomial, periodic)
// PIPE-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow{checkpoint=binomial-x}' 2>&1 | filecheck %s --check-prefix=COUNT
// COUNT: error: pass-pipeline:1:{{[0-9]+}}: option 'checkpoint' of tapeflow: expected SCHEDULE-SNAPSHOTS (e.g. binomial-8), got 'binomial-x'
// COUNT-NOT: Traceback

// RUN: not tapeflow-opt %s -p 'tapeflow{checkpoint=periodic-0}' 2>&1 | filecheck %s --check-prefix=PZERO
// PZERO: error: pass-pipeline:1:{{[0-9]+}}: tapeflow: snapshots must be at least 1, got 0

// RUN: not tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint' 2>&1 | filecheck %s --check-prefix=MARK
// MARK: error: {{.*}}errors.mlir:32:3: 'scf.while' tapeflow-checkpoint: 'tapeflow.checkpoint' marks a loop: expected an scf.for
// MARK-NOT: Traceback

func.func @f(%x: memref<4xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %i0 = arith.constant 0 : index
  %r:2 = scf.while (%i = %i0, %a = %z) : (index, f64) -> (index, f64) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %a : index, f64
  } do {
  ^bb0(%j: index, %b: f64):
    %v = memref.load %x[%c0] : memref<4xf64>
    %s = math.sin %v : f64
    memref.store %s, %x[%c0] : memref<4xf64>
    %b2 = arith.addf %b, %s : f64
    %j2 = arith.addi %j, %c1 : index
    scf.yield %j2, %b2 : index, f64
  } attributes {tapeflow.checkpoint}
  func.return %r#1 : f64
}

// A bare `:` value (mlir-opt's spelling) is quoted for xDSL; the columns stay those typed:
// the option after it is reported at its own column (32), not 2 further on.
// RUN: not tapeflow-opt %s -p 'tapeflow{checkpoint=binomial:8 spm-bytes=abc}' 2>&1 | filecheck %s --check-prefix=COLON
// COLON: error: pass-pipeline:1:32: option 'spm-bytes' of tapeflow expects int|None, got 'abc'
// COLON-NOT: Traceback
