// A misspelt pass in the mlir-opt spelling gets the same "did you mean" as in -p; a bad
// option value handed on by the `tapeflow` pipeline is reported at the option as typed,
// in the name of the pass typed (not at column 1, not as tapeflow-autodiff).
// RUN: not tapeflow-opt %s --tapeflow-autodif 2>&1 | filecheck %s --check-prefix=SPELL
// RUN: not tapeflow-opt %s -p 'tapeflow{policy=foo}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not tapeflow-opt %s -p 'canonicalize,tapeflow-autodiff{policy=foo}' 2>&1 | filecheck %s --check-prefix=DIRECT

// SPELL: error: unknown pass or option '--tapeflow-autodif' (did you mean '--tapeflow-autodiff'?)
// SPELL-NOT: Traceback

// OPTION: error: pass-pipeline:1:10: option 'policy' of tapeflow: unknown policy 'foo' (expected one of
// OPTION-NOT: Traceback

// DIRECT: error: pass-pipeline:1:32: option 'policy' of tapeflow-autodiff: unknown policy 'foo'

func.func @f(%x: f64) -> f64 attributes {tapeflow.autodiff} {
  func.return %x : f64
}
