// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s --check-prefix=MIN
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff{policy=cache-all}' | filecheck %s --check-prefix=ALL
// RUN: tapeflow-opt %s --tapeflow-autodiff=policy=cache-all | filecheck %s --check-prefix=ALL

// min-tape recomputes what it can: x is never written, so x[i] and tanh(x[i]) are
// recomputed in the reverse loop and nothing is cached. cache-all keeps every needed
// value (the load and the tanh), but still recomputes constants and the induction var.
func.func @act(%x: memref<4xf64>, %y: memref<4xf64>) attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf64>
    %t = math.tanh %v : f64
    %p = arith.mulf %t, %v : f64
    memref.store %p, %y[%i] : memref<4xf64>
  }
  func.return
}

// MIN-LABEL: func.func @act_grad
// MIN-NOT:     tape.
// MIN:         scf.for
// MIN:           %[[V:.*]] = memref.load %x[%{{.*}}] : memref<4xf64>
// MIN-NEXT:      %[[T:.*]] = math.tanh %[[V]] : f64
// MIN-NOT:     tape.

// ALL-LABEL: func.func @act_grad
// ALL-NEXT:    %[[C1:.*]] = tape.init : !tape.cache<f64>
// ALL-NEXT:    %[[C2:.*]] = tape.init : !tape.cache<f64>
// ALL-NOT:     tape.init
// ALL:           %v = memref.load %x[%i] : memref<4xf64>
// ALL-NEXT:      tape.push %{{.*}}, %v : !tape.cache<f64>
// ALL-NEXT:      %t = math.tanh %v : f64
// ALL-NEXT:      tape.push %{{.*}}, %t : !tape.cache<f64>
// ALL:         scf.for
// ALL-NEXT:      %[[T:.*]] = tape.pop %{{.*}} : !tape.cache<f64>
// ALL-NEXT:      %[[V:.*]] = tape.pop %{{.*}} : !tape.cache<f64>
// ALL-NOT:       math.tanh
// ALL:         tape.free
