// RUN: tapeflow-opt %s -p tapeflow-lower-tape | filecheck %s

// A time loop of %T steps around a loop to %n - 1 that C computes in every step: the
// inner trip count is integer arithmetic on an argument, so it is known at the nest's
// entry. The cache is allocated once there, sized T * (n - 2) (the subtraction copied
// before the nest), as Enzyme's CacheUtility sizes it from the loop limits; it never
// grows (no scf.if, no copy loop).
func.func @diffusion_grad(%u: memref<?xf64>, %n: index, %T: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cache = tape.init : !tape.cache<f64>
  scf.for %t = %c0 to %T step %c1 {
    %m = arith.subi %n, %c1 : index
    scf.for %i = %c1 to %m step %c1 {
      %a = memref.load %u[%i] : memref<?xf64>
      tape.push %cache, %a : !tape.cache<f64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  scf.for %k = %c0 to %T step %c1 {
    %m = arith.subi %n, %c1 : index
    scf.for %l = %c1 to %m step %c1 {
      %v = tape.pop %cache : !tape.cache<f64>
      memref.store %v, %u[%l] : memref<?xf64>
    } {tapeflow.loop = 1 : i64}
  } {tapeflow.loop = 0 : i64}
  tape.free %cache : !tape.cache<f64>
  func.return
}

// CHECK-LABEL: func.func @diffusion_grad
// CHECK-NOT:     scf.for
// CHECK:         %[[M:.*]] = arith.subi %n, %c1 : index
// CHECK:         %[[BUF:.*]] = memref.alloc(%{{.*}}) {tapeflow.tape} : memref<?xf64>
// CHECK-NEXT:    %[[SP:.*]] = memref.alloc() {tapeflow.tape_meta} : memref<index>
// CHECK:         scf.for %t
// CHECK-NOT:     scf.if
// CHECK-NOT:     memref.alloc
// CHECK:         memref.store %{{.*}}, %[[BUF]][%{{.*}}] : memref<?xf64>
// CHECK:         memref.dealloc %[[BUF]]
