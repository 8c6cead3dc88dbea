// Out-of-bounds accesses are checked natively by default (upstream's
// -generate-runtime-verification): a located error line and a non-zero exit, as in
// tapeflow-run, not plausible numbers; --no-runtime-checks turns the checks off (timing).
// REQUIRES: mlir-native
// RUN: not tapeflow-exec %s --entry f --args 32 2>&1 | filecheck %s
// RUN: not tapeflow-run %s --entry f --args 32 2>&1 | filecheck %s --check-prefix=INTERP
// RUN: tapeflow-exec %s --entry f --args 16 | filecheck %s --check-prefix=OK
// RUN: tapeflow-exec %s --entry f --args 16 --no-runtime-checks | filecheck %s --check-prefix=OK
// RUN: tapeflow-exec --help | filecheck %s --check-prefix=HELP

// CHECK: error: {{.*}}bounds.mlir:22:5: 'memref.load' out-of-bounds access (runtime verification)
// CHECK-NOT: Traceback
// INTERP: error: {{.*}}bounds.mlir:22:5: 'memref.load' index [16] out of bounds
// OK: result[0]: f64 =
// HELP: --no-runtime-checks

func.func @f(%x: memref<16xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %a = memref.load %x[%i] : memref<16xf64>
    %s = arith.addf %acc, %a : f64
    scf.yield %s : f64
  }
  func.return %sum : f64
}
