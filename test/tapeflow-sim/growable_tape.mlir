// RUN: python -c "import numpy as np; np.save('%t.n.npy', np.array([3, 20]))"
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-lower-tape' | tapeflow-sim - --entry f_grad --args 1.0 --inputs 2=%t.n.npy --path interp --json | grep -v '"path"' > %t.interp
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-lower-tape' | tapeflow-sim - --entry f_grad --args 1.0 --inputs 2=%t.n.npy --path fast --json | grep -v '"path"' > %t.fast
// RUN: diff %t.interp %t.fast
// RUN: tapeflow-opt %s -p 'tapeflow-autodiff,tapeflow-lower-tape' | tapeflow-sim - --entry f_grad --args 1.0 --inputs 2=%t.n.npy | filecheck %s

// Issue 11, bug 2: an inner trip count loaded from memory inside an outer loop makes
// tapeflow-lower-tape emit Enzyme's growable tape (a memref<memref<?xf64>> slot, a 16-entry
// buffer doubled when full). Both simulator paths crashed on the memref of memrefs; now
// they give the same JSON report (but for its "path"). 23 pushes grow the tape once: the
// peak is the three 8-byte meta cells, the old 16-entry and the new 32-entry buffer
// during the copy, 24 + 128 + 256 = 408 bytes.
func.func @f(%x: memref<1xf64>, %n: memref<2xindex>) -> f64 attributes {tapeflow.autodiff} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x0 = memref.load %x[%c0] : memref<1xf64>
  %s = scf.for %j = %c0 to %c2 step %c1 iter_args(%o = %x0) -> (f64) {
    %hi = memref.load %n[%j] : memref<2xindex>
    %t = scf.for %i = %c0 to %hi step %c1 iter_args(%a = %o) -> (f64) {
      %b = math.sin %a : f64
      scf.yield %b : f64 }
    scf.yield %t : f64 }
  func.return %s : f64 }

// CHECK:      (path: fast)
// CHECK:      ops: 509 instructions, 162 loads, 91 stores
// CHECK:      tape bytes: 408 in DRAM, 0 in scratchpad tiles
