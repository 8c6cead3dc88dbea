// RUN: tapeflow-opt %s --tapeflow-regions | filecheck %s

// Values cached inside an scf.if (issue 34 item 3) are optional record fields: the push
// of `%le` in the then-branch becomes a new result of the scf.if (the else-branch yields
// `false` into the slot, never read: the reverse reads it only under the same cached
// condition), written with the record's other fields after the scf.if. The record also
// holds the scf.if's own result `%v` (pushed after it): the write must use the result of
// the new scf.if, not of the one it replaced (salam's pathfinder has this shape).

func.func @kernel_grad(%a: memref<8xf64>, %d_a: memref<8xf64>, %b: memref<8xf64>, %d_b: memref<8xf64>, %seed: f64) {
  %0 = tape.init : !tape.cache<f64>
  %1 = tape.init : !tape.cache<i1>
  %2 = tape.init : !tape.cache<i1>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.000000e+00 : f64
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %z) -> (f64) {
    %x = memref.load %a[%i] : memref<8xf64>
    %pos = arith.cmpf ogt, %x, %z : f64
    tape.push %1, %pos : !tape.cache<i1>
    %v = scf.if %pos -> (f64) {
      %y = memref.load %b[%i] : memref<8xf64>
      %le = arith.cmpf ole, %x, %y : f64
      tape.push %2, %le : !tape.cache<i1>
      %m = arith.select %le, %x, %y : f64
      scf.yield %m : f64
    } else {
      scf.yield %x : f64
    }
    tape.push %0, %v : !tape.cache<f64>
    %w = math.sin %v : f64
    %p = arith.mulf %w, %v : f64
    memref.store %p, %a[%i] : memref<8xf64>
    %s2 = arith.addf %s, %p : f64
    scf.yield %s2 : f64
  } {tapeflow.loop = 0 : i64}
  %3 = arith.constant 1 : index
  %4 = arith.constant 0 : index
  %5 = arith.constant 0.000000e+00 : f64
  %6 = arith.subi %c8, %c0 : index
  %7 = arith.addi %6, %c1 : index
  %8 = arith.subi %7, %3 : index
  %9 = arith.divsi %8, %c1 : index
  %10 = arith.cmpi slt, %9, %4 : index
  %11 = arith.select %10, %4, %9 : index
  %12 = scf.for %13 = %4 to %11 step %3 iter_args(%14 = %seed) -> (f64) {
    %15 = tape.pop %0 : !tape.cache<f64>
    %16 = tape.pop %1 : !tape.cache<i1>
    %17 = arith.subi %11, %3 : index
    %18 = arith.subi %17, %13 : index
    %19 = arith.muli %18, %c1 : index
    %20 = arith.addi %c0, %19 : index
    %w_1 = math.sin %15 : f64
    %21 = memref.load %d_a[%20] : memref<8xf64>
    %22 = arith.addf %14, %21 : f64
    memref.store %5, %d_a[%20] : memref<8xf64>
    %23 = arith.mulf %22, %15 : f64
    %24 = arith.mulf %22, %w_1 : f64
    %25 = math.cos %15 : f64
    %26 = arith.mulf %23, %25 : f64
    %27 = arith.addf %24, %26 : f64
    %28 = scf.if %16 -> (f64) {
      %29 = tape.pop %2 : !tape.cache<i1>
      %30 = arith.select %29, %27, %5 : f64
      %31 = arith.addf %5, %30 : f64
      %32 = arith.select %29, %5, %27 : f64
      %33 = memref.load %d_b[%20] : memref<8xf64>
      %34 = arith.addf %33, %32 : f64
      memref.store %34, %d_b[%20] : memref<8xf64>
      scf.yield %31 : f64
    } else {
      %35 = arith.addf %5, %27 : f64
      scf.yield %35 : f64
    }
    %36 = memref.load %d_a[%20] : memref<8xf64>
    %37 = arith.addf %36, %28 : f64
    memref.store %37, %d_a[%20] : memref<8xf64>
    scf.yield %14 : f64
  } {tapeflow.loop = 0 : i64}
  tape.free %0 : !tape.cache<f64>
  tape.free %1 : !tape.cache<i1>
  tape.free %2 : !tape.cache<i1>
  func.return
}

// CHECK-LABEL: func.func @kernel_grad
// CHECK-NOT:     tape.
// CHECK:         %[[T:.*]] = region.alloc(%{{.*}}) : !region.tape<!region.record<f64, i1, i1>>
// CHECK:         scf.for %i =
// CHECK:           %pos = arith.cmpf ogt, %x, %z : f64
// CHECK-NEXT:      %v, %[[LE:.*]] = scf.if %pos -> (f64, i1) {
// CHECK:             %le = arith.cmpf ole, %x, %y : f64
// CHECK-NEXT:        %m = arith.select %le, %x, %y : f64
// CHECK-NEXT:        scf.yield %m, %le : f64, i1
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[F:.*]] = arith.constant false
// CHECK-NEXT:        scf.yield %x, %[[F]] : f64, i1
// CHECK-NEXT:      }
// CHECK-NEXT:      region.write %[[T]][%i], %v, %pos, %[[LE]] : !region.tape<!region.record<f64, i1, i1>>
// CHECK:         scf.for
// CHECK:           %[[V:.*]], %[[POS:.*]], %[[LE2:.*]] = region.read %[[T]]
// CHECK:           scf.if %[[POS]] -> (f64) {
// CHECK-NEXT:        arith.select %[[LE2]]
// CHECK-NOT:     tape.
// CHECK:         region.dealloc %[[T]]
