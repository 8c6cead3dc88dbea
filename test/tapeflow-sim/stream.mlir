// RUN: tapeflow-sim %s --entry sum --set prefetch.enabled=false | filecheck %s
// RUN: tapeflow-sim %s --entry sum | filecheck %s --check-prefix=PF
// RUN: tapeflow-sim %s --entry sum --path interp --set prefetch.enabled=false | filecheck %s
// RUN: not tapeflow-sim %s --entry nope 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not tapeflow-sim %s --entry sum --set l1.size=1000 2>&1 | filecheck %s --check-prefix=CFG

// 512 doubles read once: 4096 bytes = 64 lines, one L1 and one L2 miss each without the
// prefetcher; with it, only line 0 misses (the stride is learnt within it).
func.func @sum(%a: memref<512xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 512 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %a[%i] : memref<512xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}

// CHECK:      ops: 1,537 instructions, 512 loads, 0 stores
// CHECK:      L1 {{ +}}512 {{ +}}448 {{ +}}64 {{ +}}0 {{ +}}0
// CHECK-NEXT: L2 {{ +}}64 {{ +}}0 {{ +}}64 {{ +}}0 {{ +}}0
// CHECK:      DRAM: 4,096 B read, 0 B written (64 demand line misses)
// CHECK:      SRAM in use: 1,081,344 B (cache_capacity
// CHECK:      result[0]: f64 =

// PF:         L1 {{ +}}512 {{ +}}511 {{ +}}1 {{ +}}63 {{ +}}63

// ERR: error: no function @nope in the module (it defines @sum)
// ERR-NOT: Traceback

// CFG: error: machine key 'l1.size' must be a power of two, got 1000
