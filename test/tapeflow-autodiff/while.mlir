// RUN: tapeflow-opt %s -p tapeflow-autodiff | filecheck %s

// scf.while with a data-dependent trip count. The forward loop gets an index counter (an
// extra trailing argument and result); the count is pushed on a cache after the loop;
// the reverse sweep pops it and runs an scf.for over it, with the adjoint of the loop
// value flowing through the reverse loop's iter_args. The value entering each iteration
// (%a, a while-loop argument) is cached; the product %m is recomputed from it.
func.func @grow(%x0: f64, %s: f64) -> f64 attributes {tapeflow.autodiff} {
  %lim = arith.constant 10.0 : f64
  %r = scf.while (%v = %x0) : (f64) -> f64 {
    %c = arith.cmpf olt, %v, %lim : f64
    scf.condition(%c) %v : f64
  } do {
  ^bb0(%a: f64):
    %m = arith.mulf %a, %s : f64
    %e = math.exp %m : f64
    %n = arith.addf %a, %e : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}

// CHECK-LABEL: func.func @grow_grad(%x0: f64, %s: f64, %seed: f64) -> (f64, f64) {
// CHECK-NEXT:    %[[CN:.*]] = tape.init : !tape.cache<index>
// CHECK-NEXT:    %[[CA:.*]] = tape.init : !tape.cache<f64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %r, %[[COUNT:.*]] = scf.while (%v = %x0, %[[K:.*]] = %[[ZERO]]) : (f64, index) -> (f64, index) {
// CHECK-NEXT:      %c = arith.cmpf olt, %v, %lim : f64
// CHECK-NEXT:      scf.condition(%c) %v, %[[K]] : f64, index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%a: f64, %[[K2:.*]]: index):
// CHECK-NEXT:      tape.push %[[CA]], %a : !tape.cache<f64>
// CHECK:           %[[K3:.*]] = arith.addi %[[K2]], %{{.*}} : index
// CHECK-NEXT:      scf.yield %n, %[[K3]] : f64, index
// CHECK-NEXT:    } attributes {tapeflow.loop = 0 : i64}
// CHECK-NEXT:    tape.push %[[CN]], %[[COUNT]] : !tape.cache<index>
// CHECK:         %[[N:.*]] = tape.pop %[[CN]] : !tape.cache<index>
// CHECK:         %{{.*}}, %[[DS:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[DV:.*]] = %seed, %{{.*}} = %{{.*}}) -> (f64, f64) {
// CHECK-NEXT:      %[[A:.*]] = tape.pop %[[CA]] : !tape.cache<f64>
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %s : f64
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[M]] : f64
// CHECK:           scf.yield
// CHECK-NEXT:    } {tapeflow.loop = 0 : i64}
// CHECK:         tape.free %[[CN]] : !tape.cache<index>
// CHECK-NEXT:    tape.free %[[CA]] : !tape.cache<f64>
// CHECK-NEXT:    func.return %{{.*}}, %[[DS]] : f64, f64
