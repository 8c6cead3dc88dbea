// RUN: tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint{snapshots=3}' | filecheck %s
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-checkpoint{snapshots=3 schedule=periodic}' | filecheck %s --check-prefix=PER
// RUN: tapeflow-opt %s -p 'tapeflow{checkpoint=binomial-3 mode=always}' | filecheck %s --check-prefix=FLOW
// mlir-opt's spelling of the same option, a bare `:` in the value (tapeflow-opt quotes it for xDSL):
// RUN: tapeflow-opt %s -p 'tapeflow{checkpoint=binomial:3 mode=always}' | filecheck %s --check-prefix=FLOW
// RUN: sed 's/{tapeflow.checkpoint}//' %s | tapeflow-opt - -p 'tapeflow-autodiff,tapeflow-checkpoint{loops="f_grad:0"}' | filecheck %s --check-prefix=NAMED
// RUN: sed 's/{tapeflow.checkpoint}//' %s | tapeflow-opt - -p 'tapeflow-autodiff,tapeflow-checkpoint{loops="f_grad:1"}' | filecheck %s --check-prefix=REV

// A marked time loop with a scalar iter_arg and a buffer it updates in place, trip count
// %n known only at run time. @f_grad keeps no tape of the loop: 3 snapshot slots plus one
// (x_{T-1}, exchanged with the memory the reverse sweep finds, restored at the end) of the
// buffer and of the scalar; the forward sweep advances untaped and saves, the reverse
// sweep restores, advances (Revolve's split, an scf.while for the repetition number), then
// replays one step taped and reverses it (@f_grad_ckpt0_seg, which owns the step's tape).

// CHECK-LABEL: func.func @f_grad(
// CHECK-NOT:     tape.push
// CHECK:         memref.alloc() {tapeflow.snapshot} : memref<4x2xf64>
// CHECK:         memref.alloc() {tapeflow.snapshot} : memref<4xf64>
// CHECK:         scf.if
// CHECK:           func.call @f_grad_ckpt0_save(
// CHECK:           scf.while
// CHECK:           func.call @f_grad_ckpt0_adv(
// CHECK:         scf.if
// CHECK:           func.call @f_grad_ckpt0_swap(
// CHECK:           func.call @f_grad_ckpt0_seg(
// CHECK:           scf.for
// CHECK:             func.call @f_grad_ckpt0_restore(
// CHECK:             func.call @f_grad_ckpt0_adv(
// CHECK:             func.call @f_grad_ckpt0_seg(
// CHECK:           func.call @f_grad_ckpt0_restore(
// CHECK:         memref.dealloc
// CHECK:         func.return
// CHECK-LABEL: func.func private @f_grad_ckpt0_adv(
// CHECK-NOT:     tape.
// CHECK:         func.return
// CHECK-LABEL: func.func private @f_grad_ckpt0_seg(
// CHECK:         tape.init
// CHECK:         scf.for
// CHECK:           tape.push
// CHECK:         } {tapeflow.loop = 0 : i64}
// CHECK:         scf.for
// CHECK:           tape.pop
// CHECK:         } {tapeflow.loop = 0 : i64}
// CHECK:         tape.free
// CHECK-LABEL: func.func private @f_grad_ckpt0_save(
// CHECK-LABEL: func.func private @f_grad_ckpt0_restore(
// CHECK-LABEL: func.func private @f_grad_ckpt0_swap(

// Periodic: no scf.while, a save per segment, each segment replayed taped once.
// PER-LABEL: func.func @f_grad(
// PER-NOT:     scf.while
// PER:         func.call @f_grad_ckpt0_save(
// PER:         func.call @f_grad_ckpt0_adv(
// PER:         func.call @f_grad_ckpt0_restore(
// PER:         func.call @f_grad_ckpt0_seg(

// The pipeline: the segment's tape is a record tape streamed through a FIFO.
// FLOW-LABEL: func.func private @f_grad_ckpt0_seg(
// FLOW:         stream.fifo
// FLOW:         stream.commit
// FLOW:         stream.prefetch

func.func @f(%x: memref<2xf64>, %n: index) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %acc = scf.for %t = %c0 to %n step %c1 iter_args(%a = %z) -> (f64) {
    %x0 = memref.load %x[%c0] : memref<2xf64>
    %x1 = memref.load %x[%c1] : memref<2xf64>
    %s = math.sin %x0 : f64
    %y = arith.mulf %s, %x1 : f64
    memref.store %y, %x[%c0] : memref<2xf64>
    %a2 = arith.addf %a, %y : f64
    scf.yield %a2 : f64
  } {tapeflow.checkpoint}
  func.return %acc : f64
}

// Unmarked, named by `loops=`: the same rewrite.
// NAMED-LABEL: func.func @f_grad(
// NAMED:         func.call @f_grad_ckpt0_seg(
// The reverse loop named (it pushes nothing): nothing to checkpoint, the IR is unchanged.
// REV-NOT: ckpt
