"""Source-language frontends: programs in another language become TapeFlow's input IR.

`c/` translates a C subset (parsed by Clang through the `libclang` bindings) into
upstream MLIR (func, scf, memref, arith, math) with C `file:line:col` locations.
"""
