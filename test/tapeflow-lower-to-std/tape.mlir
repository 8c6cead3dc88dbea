// RUN: tapeflow-opt %s -p tapeflow-lower-to-std | filecheck %s --match-full-lines

// A tape.cache becomes Enzyme's growable stack: the elements buffer held in a
// memref<memref<?xT>>, a size and a capacity (the hint, else 16). A push doubles the
// capacity when full; a pop checks for an empty cache; a free checks that it is empty.

func.func @f(%x: f64) -> f64 {
  %c = tape.init capacity = 2 : !tape.cache<f64>
  tape.push %c, %x : !tape.cache<f64>
  %y = tape.pop %c : !tape.cache<f64>
  tape.free %c : !tape.cache<f64>
  func.return %y : f64
}

// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @f(%x: f64) -> f64 {
// CHECK-NEXT:     %[[SLOT:.*]] = memref.alloc() : memref<memref<?xf64>>
// CHECK-NEXT:     %[[SIZE:.*]] = memref.alloc() : memref<index>
// CHECK-NEXT:     %[[CAP:.*]] = memref.alloc() : memref<index>
// CHECK-NEXT:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:     %[[BUF:.*]] = memref.alloc(%[[C2]]) : memref<?xf64>
// CHECK-NEXT:     memref.store %[[BUF]], %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:     memref.store %[[ZERO]], %[[SIZE]][] : memref<index>
// CHECK-NEXT:     memref.store %[[C2]], %[[CAP]][] : memref<index>
// CHECK-NEXT:     %[[N:.*]] = memref.load %[[SIZE]][] : memref<index>
// CHECK-NEXT:     %[[K:.*]] = memref.load %[[CAP]][] : memref<index>
// CHECK-NEXT:     %[[FULL:.*]] = arith.cmpi sge, %[[N]], %[[K]] : index
// CHECK-NEXT:     scf.if %[[FULL]] {
// CHECK-NEXT:       %{{.*}} = arith.constant 2 : index
// CHECK-NEXT:       %[[K2:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK-NEXT:       %[[OLD:.*]] = memref.load %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:       %[[NEW:.*]] = memref.alloc(%[[K2]]) : memref<?xf64>
// CHECK-NEXT:       %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:       %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:       scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:         %[[E:.*]] = memref.load %[[OLD]][%[[I]]] : memref<?xf64>
// CHECK-NEXT:         memref.store %[[E]], %[[NEW]][%[[I]]] : memref<?xf64>
// CHECK-NEXT:       }
// CHECK-NEXT:       memref.dealloc %[[OLD]] : memref<?xf64>
// CHECK-NEXT:       memref.store %[[NEW]], %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:       memref.store %[[K2]], %[[CAP]][] : memref<index>
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[B:.*]] = memref.load %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:     memref.store %x, %[[B]][%[[N]]] : memref<?xf64>
// CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:     %[[N1:.*]] = arith.addi %[[N]], %[[ONE]] : index
// CHECK-NEXT:     memref.store %[[N1]], %[[SIZE]][] : memref<index>
// CHECK-NEXT:     %[[M:.*]] = memref.load %[[SIZE]][] : memref<index>
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %[[OK:.*]] = arith.cmpi sgt, %[[M]], %{{.*}} : index
// CHECK-NEXT:     cf.assert %[[OK]], "{{.*}}tape.mlir:10:3: 'tape.pop' pop on empty cache"
// CHECK-NEXT:     %{{.*}} = arith.constant 1 : index
// CHECK-NEXT:     %[[TOP:.*]] = arith.subi %[[M]], %{{.*}} : index
// CHECK-NEXT:     memref.store %[[TOP]], %[[SIZE]][] : memref<index>
// CHECK-NEXT:     %[[B2:.*]] = memref.load %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:     %[[Y:.*]] = memref.load %[[B2]][%[[TOP]]] : memref<?xf64>
// CHECK-NEXT:     %[[L:.*]] = memref.load %[[SIZE]][] : memref<index>
// CHECK-NEXT:     %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:     %[[EMPTY:.*]] = arith.cmpi eq, %[[L]], %{{.*}} : index
// CHECK-NEXT:     cf.assert %[[EMPTY]], "{{.*}}tape.mlir:11:3: 'tape.free' cache freed with value(s) never popped"
// CHECK-NEXT:     %[[B3:.*]] = memref.load %[[SLOT]][] : memref<memref<?xf64>>
// CHECK-NEXT:     memref.dealloc %[[B3]] : memref<?xf64>
// CHECK-NEXT:     memref.dealloc %[[SLOT]] : memref<memref<?xf64>>
// CHECK-NEXT:     memref.dealloc %[[SIZE]] : memref<index>
// CHECK-NEXT:     memref.dealloc %[[CAP]] : memref<index>
// CHECK-NEXT:     func.return %[[Y]] : f64
// CHECK-NEXT:   }
// CHECK-NEXT: }
