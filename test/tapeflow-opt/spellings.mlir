// mlir-opt spellings (--pass, --pass=opts) and -p pipelines are the same pipeline.

// RUN: tapeflow-opt %s --cse --canonicalize | filecheck %s
// RUN: tapeflow-opt %s -p cse,canonicalize | filecheck %s
// RUN: tapeflow-opt %s --cse -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @twice
// CHECK-NEXT:    %{{.*}} = arith.addf %x, %x : f64
// CHECK-NEXT:    func.return %{{.*}} : f64
func.func @twice(%x: f64) -> f64 {
  %a = arith.addf %x, %x : f64
  %b = arith.addf %x, %x : f64
  func.return %b : f64
}

// --help lists the passes.
// RUN: tapeflow-opt --help | filecheck %s --check-prefix=HELP
// HELP: passes (use with -p {{.*}} or --NAME[=opt=v ...]):
// HELP: canonicalize
// HELP: tapeflow-layers {{.*}}layers.
// HELP-NEXT: spm-bytes=32768  (int)
