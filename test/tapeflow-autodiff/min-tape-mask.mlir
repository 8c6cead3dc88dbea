// RUN: tapeflow-opt %S/../python/Inputs/pairwise_masked.mlir -p tapeflow-autodiff | filecheck %s
// RUN: tapeflow-opt %S/../python/Inputs/pairwise_masked.mlir -p tapeflow-autodiff,tapeflow-lower-tape | filecheck %s --check-prefix=LOWER

// Why: issue 10's pairwise loop. The `scf.if` condition `j != i` depends only on
// induction variables: the reverse sweep recomputes it from its own counters instead of
// caching an i1 per (t, i, j). Under it, d = X[i] - X[j] reads memory the next time step
// overwrites; the adjoint of d / (d*d + eps) needs only d, so the minimum cut caches d
// (one f64 per (t, i, j != i)) rather than X[i] per (t, i) and X[j] per (t, i, j != i).
// It is pushed T*N*(N-1) = 36 times; tapeflow-lower-tape sizes its static stack by that
// exact count (it reserved T*N*N = 48). (Gradients are checked against finite
// differences in test/python/transforms/test_min_tape.py.)

// CHECK-LABEL: func.func @pairwise_masked_grad
// CHECK-NEXT:    %[[D:.*]] = tape.init : !tape.cache<f64>
// CHECK-NOT:     tape.init
// CHECK:         %xi = memref.load %X[%i] : memref<4xf64>
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      %ne = arith.cmpi ne, %j, %i : index
// CHECK-NEXT:      %r = scf.if %ne -> (f64) {
// CHECK-NEXT:        %xj = memref.load %X[%j] : memref<4xf64>
// CHECK-NEXT:        %d = arith.subf %xi, %xj : f64
// CHECK-NEXT:        tape.push %[[D]], %d : !tape.cache<f64>
// CHECK-NOT:     !tape.cache<i1>
// CHECK:         %[[NE:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    scf.if %[[NE]]
// CHECK-NEXT:      tape.pop %[[D]] : !tape.cache<f64>
// CHECK-NOT:     !tape.cache<i1>

// LOWER-LABEL: func.func @pairwise_masked_grad
// LOWER-NEXT:    memref.alloc() {tapeflow.tape} : memref<36xf64>
// LOWER-NOT:     {tapeflow.tape}
