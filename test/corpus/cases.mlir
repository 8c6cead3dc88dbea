// Malformed inputs kept as regression cases (test/python/system/test_corpus.py runs each chunk
// through tapeflow-opt, tapeflow-run and tapeflow-sim): each must exit 1 with one
// located `error:` line. Each chunk says why it is here.

// Wrong index count for memref.load (xDSL's verifier raises a bare Exception).
func.func @f(%m: memref<4x4xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4x4xf64>
  func.return %v : f64
}

// -----

// Wrong index count for memref.store.
func.func @f(%m: memref<4xf64>, %x: f64) {
  %c0 = arith.constant 0 : index
  memref.store %x, %m[%c0, %c0] : memref<4xf64>
  func.return
}

// -----

// Returns two values from a function declared to return one.
func.func @f(%a: f64) -> f64 {
  %x = arith.addf %a, %a : f64
  func.return %x, %x : f64, f64
}

// -----

// Undefined SSA value: located at its use, not at the end of the file.
func.func @f(%a: f64) -> f64 {
  %x = arith.addf %a, %zz : f64
  func.return %x : f64
}

// -----

// Operand type differs from the declared one.
func.func @f(%a: f32) -> f64 {
  %x = arith.addf %a, %a : f64
  func.return %x : f64
}

// -----

// arith.addf on integers.
func.func @f(%a: i32) -> i32 {
  %x = arith.addf %a, %a : i32
  func.return %x : i32
}

// -----

// Generic form with the wrong number of operands.
func.func @f(%a: f64) -> f64 {
  %x = "arith.addf"(%a) : (f64) -> f64
  func.return %x : f64
}

// -----

// An op of a registered dialect that does not exist.
func.func @f(%a: f64) -> f64 {
  %x = arith.bogus %a : f64
  func.return %x : f64
}

// -----

// An op of a dialect nobody registered.
func.func @f(%a: f64) -> f64 {
  %x = "nosuch.op"(%a) : (f64) -> f64
  func.return %x : f64
}

// -----

// Calls a function that does not exist.
func.func @f(%a: f64) -> f64 {
  %x = func.call @nowhere(%a) : (f64) -> f64
  func.return %x : f64
}

// -----

// Calls with the wrong number of arguments.
func.func @g(%a: f64, %b: f64) -> f64 {
  func.return %a : f64
}
func.func @f(%a: f64) -> f64 {
  %x = func.call @g(%a) : (f64) -> f64
  func.return %x : f64
}

// -----

// An i64 constant that does not fit in 64 bits.
func.func @f() -> i64 {
  %x = arith.constant 1000000000000000000000000000000000000000000 : i64
  func.return %x : i64
}

// -----

// An index constant wider than 64 bits (mlir-opt-22: integer constant out of range).
func.func @f() -> index {
  %x = arith.constant 100000000000000000000 : index
  func.return %x : index
}

// -----

// A memref dimension wider than 64 bits (mlir-opt-22: invalid dimension).
func.func @f(%m: memref<100000000000000000000xf64>) {
  func.return
}

// -----

// cf.br passes an f64 to an f32 block argument (mlir-opt-22: type mismatch).
func.func @f(%a: f64) -> f32 {
  cf.br ^bb1(%a : f64)
^bb1(%b: f32):
  func.return %b : f32
}

// -----

// A branch to a block that does not exist.
func.func @f(%a: f64) -> f64 {
  cf.br ^bb7
}

// -----

// scf.for without a terminator type match: yields an i32 for an f64 iter_arg.
func.func @f(%a: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%s = %a) -> (f64) {
    scf.yield %i1 : i32
  }
  func.return %r : f64
}

// -----

// !tape.cache without an element type.
func.func @f(%c: !tape.cache<>) {
  func.return
}

// -----

// !tape.cache with two element types.
func.func @f(%c: !tape.cache<f64, f64>) {
  func.return
}

// -----

// A cache freed twice.
func.func @f() {
  %c = tape.init : !tape.cache<f64>
  tape.free %c : !tape.cache<f64>
  tape.free %c : !tape.cache<f64>
  func.return
}

// -----

// tape.push of an f32 on an f64 cache.
func.func @f(%x: f32) {
  %c = tape.init : !tape.cache<f64>
  tape.push %c, %x : !tape.cache<f64>
  func.return
}

// -----

// A string attribute that never closes (xDSL's lexer would take exponential time).
func.func @f() attributes {note = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa} {
  func.return
}

// -----

// A string with an escape MLIR does not have (same exponential backtracking upstream).
func.func @f() attributes {note = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\q"} {
  func.return
}

// -----

// An unbalanced brace.
func.func @f(%a: f64) -> f64 {
  func.return %a : f64

// -----

// A type that is not a type.
func.func @f(%a: f65) -> f65 {
  func.return %a : f65
}

// -----

// A redefined SSA value.
func.func @f(%a: f64) -> f64 {
  %x = arith.addf %a, %a : f64
  %x = arith.mulf %a, %a : f64
  func.return %x : f64
}
