// REQUIRES: enzyme
// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/lstm.mlir -p enzyme-autodiff | filecheck %s --check-prefix=ENZYME
// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/lstm.mlir -p enzyme-autodiff,enzyme-import-tape | filecheck %s
// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/lstm.mlir -p enzyme-autodiff | tapeflow-run - --entry lstm_grad --args 1.0 > %t.enzyme
// RUN: tapeflow-opt %S/../../benchmarks/kernels/small/lstm.mlir -p 'enzyme-autodiff,enzyme-import-tape,tapeflow-regions,tapeflow-layers{spm-bytes=1024},tapeflow-stream,tapeflow-lower-tape' \
// RUN:   | tapeflow-run - --entry lstm_grad --args 1.0 > %t.tapeflow
// RUN: diff %t.enzyme %t.tapeflow

// Enzyme-MLIR's own tape of the small lstm: 32 caches, 21 of them of memrefs (the same
// buffer pushed at every iteration, e.g. an argument).
// ENZYME-COUNT-32: enzyme.init
// ENZYME-NOT:      enzyme.init

// Imported: a cache of memref references whose every push pushes one buffer defined
// before the pops is forwarded (each pop is that buffer); the other 11 are tape caches,
// one each. TapeFlow's passes then run on them, and the gradient is Enzyme's bit for bit.
// CHECK-COUNT-11: tape.init : !tape.cache<{{f64|index}}>
// CHECK-NOT:      tape.init
// CHECK-NOT:      enzyme.
