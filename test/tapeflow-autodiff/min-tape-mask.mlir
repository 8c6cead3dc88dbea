// RUN: tapeflow-opt %S/../python/Inputs/pairwise_masked.mlir -p tapeflow-autodiff | filecheck %s
// RUN: tapeflow-opt %S/../python/Inputs/pairwise_masked.mlir -p tapeflow-autodiff,tapeflow-lower-tape | filecheck %s --check-prefix=LOWER

// Why: issue 10's pairwise loop. The `scf.if` condition `j != i` depends only on
// induction variables: the reverse sweep recomputes it from its own counters instead of
// caching an i1 per (t, i, j). The loads under it read memory the next time step
// overwrites, so they are cached, T*N*(N-1) = 36 times; tapeflow-lower-tape sizes their
// static stack by that exact count (it reserved T*N*N = 48). (Gradients are checked
// against finite differences in test/python/test_min_tape.py.)

// CHECK-LABEL: func.func @pairwise_masked_grad
// CHECK-NEXT:    %[[XI:.*]] = tape.init : !tape.cache<f64>
// CHECK-NEXT:    %[[XJ:.*]] = tape.init : !tape.cache<f64>
// CHECK-NOT:     tape.init
// CHECK:         tape.push %[[XI]], %xi : !tape.cache<f64>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %ne = arith.cmpi ne, %j, %i : index
// CHECK-NEXT:      %r = scf.if %ne -> (f64) {
// CHECK-NEXT:        %xj = memref.load %X[%j] : memref<4xf64>
// CHECK-NEXT:        tape.push %[[XJ]], %xj : !tape.cache<f64>
// CHECK-NOT:     !tape.cache<i1>
// CHECK:         %[[NE:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    scf.if %[[NE]]
// CHECK-NEXT:      tape.pop %[[XJ]] : !tape.cache<f64>
// CHECK-NOT:     !tape.cache<i1>

// LOWER-LABEL: func.func @pairwise_masked_grad
// LOWER-DAG:     memref.alloc() {tapeflow.tape} : memref<3x4xf64>
// LOWER-DAG:     memref.alloc() {tapeflow.tape} : memref<36xf64>
// LOWER-NOT:     {tapeflow.tape}
