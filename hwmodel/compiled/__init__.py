"""The fast execution path: a module's functions compiled to Python source and `exec`ed.

The op-by-op xDSL interpreter with the hardware model as an `Interpreter.Listener`
(`tapeflow.hwmodel.listener`) is the reference; it runs ~150-200k ops/s. This package compiles
every `func.func` of a module into one Python function, which runs 50-90x faster and
records what the hardware model needs; `tapeflow.hwmodel.fastsim` feeds that to the
model's own cache simulator, timing and report code, so the report is identical.

    program = CompiledModule(module)            # UnsupportedOpError names an op it lacks
    results, trace = program.run("f_grad", interpreter_values)
    trace.op_counts()                           # == xDSL OpCounter's counts

Translation (one Python function per `func.func`):
- SSA values -> Python locals (constants -> literals); `scf.for`/`affine.for` -> `for`
  over `range`; `scf.if` -> `if`; `scf.while` -> `while True`; `func.call` -> a call.
- arith/math -> Python expressions with the interpreter's semantics, from the one table
  of `tapeflow.semantics` (its Python floats, f32 rounding, libm errors -> numpy's IEEE
  results, integer wrapping (i64 and index too, unless the value's range is proven,
  see below; INT64_MIN / -1 wraps)); an integer division by zero runs the
  interpreter's op, which reports the error. An op without an inline translation, no
  regions and only scalar operands/results runs the interpreter's own implementation.
- A memref stays the interpreter's `ShapedArray` and is accessed through a `memoryview`
  cast to its element format over the same bytes (row-major offsets, as `ShapedArray`);
  a memref of memrefs (the growable tape's slot) through its list of memrefs. Every
  index is checked against its dimension unless its range is proven in bounds
  (`FunctionCompiler.ranges`: constants, induction variables of loops with constant
  positive steps and integer bounds, +, -, * and affine maps of those); a failing check
  runs the interpreter's implementation of the op, so the error is the interpreter's.
- Errors: interpreter errors keep their one located line (`interpreters.runtime_error`);
  Python's limits on the generated code (e.g. 21 nested loops) raise
  `UnsupportedOpError` at compile time and trace-encoding limits `FastPathLimit` during
  a run, on which `simulate_auto` falls back to the op-by-op path.
  `tape.cache` is a list; region tapes are `RecordBuffer`s read/written inline with the
  region interpreter's checks; allocations, deallocations and every `stream` op run the
  interpreter's implementation as *events* (`Trace.event`).

What a run records (`Trace`):
- Segment counters: a block is cut into straight-line segments after every op with
  regions and every call; each segment's counter counts its executions (a loop body that
  is one segment without events is counted in bulk before the loop). Counts per op are
  then exact at any point: `Trace.op_counts()`.
- Streamed loops: a bulk-counted loop whose DRAM accesses are all memref loads/stores
  with offsets affine in the induction variable (constant coefficients, `ranges.Stream`) also
  gets a variant without per-access appends, taken from `Trace.stream_min` iterations:
  `Trace.stream` appends the addresses with NumPy, chunk by chunk up to each phase end.
- First execution of a segment (`Trace.first`) numbers its ops in first-execution order:
  the op-by-op model's PCs (the stride prefetcher's table index).
- One int64 per access to a DRAM memref, region tape or tape cache, appended to an
  `array('q')`: store bit, static memory-op id, byte offset, provisional buffer id
  (bit layout at `SID_SHIFT`...). `Trace.flush` (every `batch_size` accesses, at loop
  ends and before events) turns buffer ids into the model's base addresses (given at the
  first access, in first-access order, as the listener does) and op ids into PCs, and
  hands (addrs, pcs, writes) arrays to `Trace.consume`. Scratchpad accesses are counted
  per op, not recorded.
- Events: `Trace.run_event` (the adapter brings the model's counts and cache exactly up
  to the event op before a DMA, acquire or wait, so DMA timing matches).
- Phase windows: `Trace.window` = [charged ops so far, at the last phase end], bumped
  per segment entry (`seg_charged`); loop-iteration ends call `Trace.window_end` (or,
  in a bulk-counted loop, `window_bulk` at the iteration `window_start` computed), which
  record `phase_ends` for the adapter (hwmodel/timing/phases.py: `core.window_ops`).

Unsupported IR raises `UnsupportedOpError` naming the op (with its location) when the
module is compiled, so callers can fall back to the op-by-op path.

Private xDSL names used here (no public API in xDSL 0.74): `Interpreter._impls._impl_dict`
(`ModuleCompiler.has_impl`: whether the interpreter implements an op, asked at compile
time so that an op without one fails with `UnsupportedOpError`, not in the middle of a run).

The files, one per concern:
- module.py: `CompiledModule` (compile once, run many times), `Trace` (what a run records);
- compiler.py: `ModuleCompiler` (the module's source and static tables) and
  `FunctionCompiler` (one function: naming, segments, memory access, checks), which hands
  each op to its emitter (`EMITTERS`);
- the emitters: scalars.py (constants, arith, math, comparisons), loops.py (control flow,
  the streamed and numba kernel variants of loops), memory.py (memref, affine, tape,
  region and stream ops);
- ranges.py: affine maps as Python and proven value ranges; limits.py: the errors that
  send a program to the op-by-op path and the widths of a recorded access's fields.
"""
