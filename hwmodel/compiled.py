"""The fast execution path: a module's functions compiled to Python source and `exec`ed.

The op-by-op xDSL interpreter with the hardware model as an `Interpreter.Listener`
(`tapeflow.hwmodel.model`) is the reference; it runs ~150-200k ops/s. This module compiles
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
  (`_FunctionCompiler.ranges`: constants, induction variables of loops with constant
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
  with offsets affine in the induction variable (constant coefficients, `_Stream`) also
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
  record `phase_ends` for the adapter (hwmodel/model.py: `core.window_ops`).

Unsupported IR raises `UnsupportedOpError` naming the op (with its location) when the
module is compiled, so callers can fall back to the op-by-op path.

Private xDSL names used here (no public API in xDSL 0.74): `Interpreter._impls._impl_dict`
(`CompiledModule.has_impl`: whether the interpreter implements an op, asked at compile
time so that an op without one fails with `UnsupportedOpError`, not in the middle of a run).
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import affine, arith, builtin, func, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.traits import IsTerminator as _IsTerminator
from xdsl.utils.comparisons import to_signed
from xdsl.utils.exceptions import DiagnosticException, InterpretationError, VerifyException

from tapeflow.diagnostics import op_error
from tapeflow.hwmodel import jit
from tapeflow.hwmodel.jit import Lines, St
from tapeflow.hwmodel.cache import numba_decoder
from tapeflow.hwmodel.model import buffer_memory, copy_charges, is_ideal_tape, mem_columns
from tapeflow.dialects import region, stream
from tapeflow.dialects.region import element_size, field_size, is_spm
from tapeflow.interpreters import runtime_error
from tapeflow.interpreters.extra_ops import ObjectStorage
from tapeflow.interpreters.region import check_record, record_unwritten
from tapeflow.semantics import HELPERS, SCALARS, cmpu, scalar_type, wrap
from tapeflow.semantics.memory import ADDR_SHIFT, FIRST_ADDRESS, PC_MASK, PC_SHIFT, element_run
from tapeflow.semantics.memory import encode
from tapeflow.semantics.memory import next_base, record_fields, tape_base

INDEX_BITWIDTH = 64
"""The interpreter's index width on this (64-bit) host."""

_I64_MIN = -(1 << 63)
_I64_MAX = (1 << 63) - 1


class UnsupportedOpError(DiagnosticException):
    """The fast path cannot compile this op; fall back to the op-by-op interpreter."""

    def __init__(self, op: Operation, why: str = "not supported by the fast path"):
        super().__init__(op_error(op, why))
        self.op = op


class FastPathLimit(InterpretationError):
    """A run hit a limit of the fast path's encoding (not an error of the program):
    `simulate_auto` reruns it on the op-by-op path."""


# ------------------------------------------------------------------------------------------
# The trace a compiled run records.

# One recorded access is one int64: bit 0 = store, bits 1-16 = the static id of the memory
# op (`CompiledModule.mem_ops`), bits 17-44 = byte offset inside its buffer, bits 45-62 =
# the buffer's provisional id (`Trace.buffers`). Provisional ids become the hardware
# model's base addresses when a batch is flushed, in order of first access, which is the
# order in which the op-by-op model allocates addresses.
SID_SHIFT = PC_SHIFT  # the sid sits in the model's PC field (tapeflow.semantics.memory)
SID_LIMIT = PC_MASK + 1
OFF_SHIFT = ADDR_SHIFT
OFF_LIMIT = 1 << 28
BUF_SHIFT = 45
BUF_LIMIT = 1 << 18

MEMREF, RECORDS, TAPE = "memref", "records", "tape"



class Trace:
    """The state of one compiled run: counters, access stream, first-execution order.

    Subclass hooks (the hardware-model adapter overrides them):
    - `base_of(kind, obj, size)`: the base address of a buffer at its first access;
    - `tape_peak(cache, peak)`: a tape cache grew to `peak` bytes;
    - `consume(addrs, pcs, writes)`: a batch of final addresses (numpy int64 arrays);
    - `run_event(k, op, args)`: runs an event op (default: the interpreter's impl).
    """

    stream_min = 32
    """Trip count from which a streamable loop appends its addresses with NumPy (below,
    per-access appends cost less than the NumPy calls)."""

    jit_min_ops = 256
    """Ops (estimated) from which a loop nest with a kernel (`tapeflow.hwmodel.jit`) runs
    it: below, the call costs more than the Python loop."""

    jit_after = 10_000_000
    """Ops (estimated: trip counts x ops per iteration) a nest must reach, its current entry
    included, before its kernel is compiled, unless numba's cache has it already:
    compiling (0.5-5 s) pays for itself only on long runs. Tests set 0."""

    def __init__(self, program: CompiledModule, batch_size: int = 1 << 16):
        self.program = program
        self.batch_size = batch_size
        self.block_counts: list[int] = [0] * len(program.segments)
        self.accesses = array("q")
        self.flushed = 0
        self.dyn = [0, 0, 0]
        """Dynamic counts the segments cannot give: loads, stores, cache bytes (memref.copy)."""
        self.pc_of: dict[Operation, int] = {}
        """Every op executed so far -> its id in first-execution order (the model's PC)."""
        self.order: list[Operation] = []
        self.pc_table = np.zeros(max(1, len(program.mem_ops)), dtype=np.int64)
        self.buffers: list[tuple[str, Any, int]] = []
        """Provisional buffer id -> (kind, object, bytes: a memref's size, a tape's element)."""
        self._buffer_ids: dict[int, int] = {}
        self._bases = np.full(64, -1, dtype=np.int64)
        self.tape_peaks: dict[int, int] = {}
        self._next_addr = FIRST_ADDRESS
        self._tapes = 0
        self.has_tapes = False
        self._next_pc = 0
        self.window = [0, 0]
        """[charged ops so far (per segment entry), charged ops at the last phase end]."""
        self.window_ops = 1 << 62
        """`core.window_ops` of the hardware model (the adapter sets it; none here)."""
        self.phase_ends: list[tuple[int, list[int], list[int]]] = []
        """Window phase ends not yet replayed: (access position, segment counts, dyn)."""
        self._jit_buf = np.empty(1 << 12, dtype=np.int64)
        """Where loop kernels write their encoded accesses (they grow it)."""
        self._jit_phase_ends: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        """Per kernel, where it records phase ends: access position, its counters."""

    # -- called by the generated code ------------------------------------------------------
    def first(self, k: int) -> None:
        """First execution of segment `k`: its ops get PCs in order (as the model's)."""
        self.block_counts[k] = 1
        pc_of = self.pc_of
        program = self.program
        span = program.pc_span
        for op in program.segments[k]:
            if op not in pc_of:
                pc = self._next_pc & PC_MASK
                self._next_pc += span.get(op, 1)
                pc_of[op] = pc
                self.order.append(op)
                for sid, delta in program.sids_of.get(op, ()):
                    self.pc_table[sid] = (pc + delta) & PC_MASK

    def buffer_id(self, kind: str, obj: Any, size: int = 0) -> int:
        """The provisional id of `obj` (a memref's memory, RecordBuffer or tape list),
        shifted; `size` as in `buffers`."""
        key = id(obj)
        pid = self._buffer_ids.get(key)
        if pid is None:
            pid = len(self.buffers)
            if pid >= BUF_LIMIT:
                raise FastPathLimit(f"fast path: more than {BUF_LIMIT} buffers")
            self.buffers.append((kind, obj, size))
            self._buffer_ids[key] = pid
            if kind == TAPE:
                self.has_tapes = True
        return pid << BUF_SHIFT

    def memref_id(self, sa: ShapedArray[Any]) -> int:
        memory, offset, nbytes, _ = buffer_memory(sa)
        if nbytes >= OFF_LIMIT:
            raise FastPathLimit(f"fast path: a buffer of {nbytes} bytes (limit {OFF_LIMIT})")
        return self.buffer_id(MEMREF, memory, nbytes) + (offset << OFF_SHIFT)

    def records_id(self, buf: Any) -> int:
        if buf.size_bytes >= OFF_LIMIT:
            raise FastPathLimit(f"fast path: a record tape of {buf.size_bytes} bytes")
        return self.buffer_id(RECORDS, buf)

    def tape_id(self, cache: list[Any], elsize: int) -> int:
        return self.buffer_id(TAPE, cache, elsize)

    def flush(self) -> None:
        n = len(self.accesses)
        if not n:
            return
        a = np.frombuffer(self.accesses, dtype=np.int64).copy()
        del self.accesses[:]
        self.flushed += n
        if len(self._bases) < len(self.buffers):
            grown = np.full(max(len(self.buffers), 2 * len(self._bases)), -1, dtype=np.int64)
            grown[: len(self._bases)] = self._bases
            self._bases = grown
        bases = self._bases
        decode = numba_decoder()
        if decode is not None:  # one pass; buffers touched for the first time get their
            addrs = np.empty(n, dtype=np.int64)  # bases in first-touch order
            pcs = np.empty(n, dtype=np.int64)
            writes = np.empty(n, dtype=np.int64)
            layout = np.array([BUF_SHIFT, OFF_SHIFT, OFF_LIMIT - 1, SID_SHIFT, SID_LIMIT - 1],
                              dtype=np.int64)  # fmt: skip
            k = decode(a, 0, bases, self.pc_table, layout, addrs, pcs, writes)
            while k >= 0:
                pid = int(a[k]) >> BUF_SHIFT
                kind, obj, size = self.buffers[pid]
                bases[pid] = self.base_of(kind, obj, size)
                k = decode(a, k, bases, self.pc_table, layout, addrs, pcs, writes)
            if self.has_tapes:
                self._tape_peaks(a >> BUF_SHIFT, (a >> OFF_SHIFT) & (OFF_LIMIT - 1), writes)
            self.consume(addrs, pcs, writes)
            return
        bufs = a >> BUF_SHIFT
        fresh = np.flatnonzero(bases[bufs] < 0)
        if len(fresh):  # buffers touched for the first time: bases in first-touch order
            ids, first = np.unique(bufs[fresh], return_index=True)
            for pid in ids[np.argsort(first, kind="stable")]:
                kind, obj, size = self.buffers[int(pid)]
                bases[pid] = self.base_of(kind, obj, size)
        offs = (a >> OFF_SHIFT) & (OFF_LIMIT - 1)
        addrs = bases[bufs] + offs
        pcs = self.pc_table[(a >> SID_SHIFT) & (SID_LIMIT - 1)]
        writes = a & 1
        if self.has_tapes:
            self._tape_peaks(bufs, offs, writes)
        self.consume(addrs, pcs, writes)

    def _tape_peaks(self, bufs: Any, offs: Any, writes: Any) -> None:
        for pid in np.unique(bufs[writes == 1]):
            kind, obj, elsize = self.buffers[int(pid)]
            if kind != TAPE:
                continue
            sel = (bufs == pid) & (writes == 1)
            peak = int(offs[sel].max()) + elsize
            if peak > self.tape_peaks.get(int(pid), 0):
                self.tape_peaks[int(pid)] = peak
                self.tape_peak(obj, peak)

    def event(self, k: int, args: tuple[Any, ...]) -> tuple[Any, ...]:
        op = self.program.event_ops[k]
        return self.run_event(k, op, args)

    def stream(self, start: int, stop: int, step: int, sites: tuple[int, ...]) -> None:
        """The accesses of iterations `range(start, stop, step)` of a streamed loop: per
        iteration, each site's `invariant + coefficient * iv` (`_Stream`), in order."""
        if start >= stop:
            return
        ivs = np.arange(start, stop, step, dtype=np.int64)
        pairs = np.array([wrap(x, 64) for x in sites], dtype=np.int64).reshape(-1, 2)
        out = pairs[:, 0][None, :] + ivs[:, None] * pairs[:, 1][None, :]
        self.accesses.frombytes(out.tobytes())

    def jit_nest(self, m: int, trips: int, args: tuple[Any, ...], carried: tuple[Any, ...],
                 objects: tuple[Any, ...]) -> tuple[Any, ...] | None:  # fmt: skip
        """Runs kernel `m` (a loop nest of `trips` iterations, see `tapeflow.hwmodel.jit`)
        and applies what it recorded: accesses, counters, first executions, phase ends.
        Returns the carried values, or None (nothing run): run the Python loop instead."""
        kernel = self.program.kernels[m]
        fn = kernel.fn
        if fn is None:
            if kernel.failed is not None or trips * kernel.ops < self.jit_min_ops:
                return None
            kernel.seen += trips * kernel.ops  # this entry included: a long one compiles now
            if kernel.seen < self.jit_after and not kernel.on_disk:
                return None
            fn = kernel.compile()
            if fn is None:
                return None
        tapes = [objects[kernel.objects.index(t)] for t in kernel.records]
        if sum(t.count for t in tapes) > trips * kernel.ops:
            return None  # converting the records would cost more than the loop
        arrays = [a for t in tapes for a in _record_arrays(t)]
        segs = kernel.segments
        counts = self.block_counts
        bc = np.array([counts[k] for k in segs], dtype=np.int64)
        wn = np.array(self.window, dtype=np.int64)
        pe, pebc = self._jit_phase_ends.get(m) or (
            np.empty(16, dtype=np.int64), np.empty((16, len(segs)), dtype=np.int64))
        firsts = np.empty(len(segs), dtype=np.int64)
        err, errf = np.zeros(8, dtype=np.int64), np.zeros(8)
        try:
            out = fn(*args, *arrays, self.program.floats, bc, wn, self.window_ops, self._jit_buf,
                     pe, pebc, firsts, err, errf, *carried)  # fmt: skip
        except Exception as error:
            if not jit.is_typing_error(error):
                raise FastPathLimit(f"fast path: loop kernel {m}: {error}") from error
            kernel.failed = f"{type(error).__name__}: {error}"
            return None  # numba could not type it: nothing of it has run
        result, self._jit_buf, p, pe, pebc, npe, nf = out
        self._jit_phase_ends[m] = pe, pebc
        kernel.runs += 1
        if err[0]:  # a check failed: the interpreter's error (the run stops here)
            kind, k, slots = kernel.errors[int(err[0]) - 1]
            values = [int(err[int(a[1:])]) if a[0] == "#" else float(errf[int(a[1:])])
                      if a[0] == "%" else objects[kernel.objects.index(a)] for a in slots]  # fmt: skip
            _kernel_error(self.program, kind, self.program.consts[k], values)
        for t, (vals, written, _) in zip(tapes, zip(*[iter(arrays)] * 3), strict=True):
            fields = vals.tolist()
            t.records[:] = [tuple(f) if w else None for f, w in zip(fields, written.tolist())]
        for i in firsts[:nf].tolist():
            self.first(segs[i])
        for i, k in enumerate(segs):
            counts[k] = int(bc[i])
        self.window[0], self.window[1] = int(wn[0]), int(wn[1])
        ends: list[tuple[int, list[int]]] = []
        if npe:
            rows = np.repeat(np.array(counts, dtype=np.int64)[None, :], npe, axis=0)
            rows[:, segs] = pebc[:npe]
            ends = list(zip(pe[:npe].tolist(), rows.tolist(), strict=True))
        self._append_run(self._jit_buf, p, ends)
        return result

    def _append_run(self, accesses: Any, n: int, ends: list[tuple[int, list[int]]]) -> None:
        """Appends `n` encoded accesses and the phase ends among them (position relative
        to the first one, segment counts) batch by batch, as the Python loop would."""
        base = self.access_count
        i = 0
        for a in range(0, n, self.batch_size):
            b = min(a + self.batch_size, n)
            while i < len(ends) and ends[i][0] <= b:
                self.phase_ends.append((base + ends[i][0], ends[i][1], self.dyn.copy()))
                i += 1
            self.accesses.frombytes(memoryview(accesses[a:b]).cast("B"))
            if len(self.accesses) >= self.batch_size:
                self.flush()
        for pos, row in ends[i:]:
            self.phase_ends.append((base + pos, row, self.dyn.copy()))

    # -- phase windows (the model's `core.window_ops` rule, see hwmodel/model.py) ----------
    def window_end(self) -> None:
        """A loop iteration ended with >= window_ops charged ops since the last phase end."""
        self.phase_ends.append((self.access_count, self.block_counts.copy(), self.dyn.copy()))
        self.window[1] = self.window[0]

    def window_start(self, k: int, r: range) -> Any:
        """A bulk-counted loop (segment `k`, iterations `r`, already added to the counters)
        will cross the window: the induction value of its first phase end."""
        c = self.program.seg_charged[k]
        w0 = self.window[0] - len(r) * c - self.window[1]
        j = max(1, -(-(self.window_ops - w0) // c))
        return r[j - 1]

    def window_bulk(self, k: int, r: range, iv: int) -> Any:
        """Iteration `iv` of a bulk-counted loop ends a phase; returns the next one's iv."""
        c = self.program.seg_charged[k]
        j = (iv - r.start) // r.step + 1
        rest = len(r) - j
        counts = self.block_counts.copy()
        counts[k] -= rest
        self.phase_ends.append((self.access_count, counts, self.dyn.copy()))
        self.window[1] = self.window[0] - rest * c
        j += -(-self.window_ops // c)
        return r[j - 1] if j <= len(r) else None

    # -- hooks -----------------------------------------------------------------------------
    def base_of(self, kind: str, obj: Any, size: int) -> int:
        """Base address of a buffer at its first access (the model's rule)."""
        if kind == TAPE:
            base = tape_base(self._tapes)
            self._tapes += 1
            return base
        size = size if kind == MEMREF else obj.size_bytes
        base = self._next_addr
        self._next_addr = next_base(base, size)
        return base

    def tape_peak(self, cache: list[Any], peak: int) -> None:
        """A tape cache grew to `peak` bytes."""

    def consume(self, addrs: Any, pcs: Any, writes: Any) -> None:
        """A flushed batch of (addrs, pcs, writes); a model's trace simulates it."""

    def run_event(self, k: int, op: Operation, args: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(self.program.run_op(op, args))

    # -- results ---------------------------------------------------------------------------
    @property
    def access_count(self) -> int:
        return self.flushed + len(self.accesses)

    def op_counts(self) -> Counter[str]:
        """Executions per op name, as xDSL's `OpCounter` counts them."""
        out: Counter[str] = Counter()
        for n, ops in zip(self.block_counts, self.program.segments, strict=True):
            if n:
                for op in ops:
                    out[op.name] += n
        return out


# ------------------------------------------------------------------------------------------
# The memref view the generated code indexes (its scalar helpers are
# `tapeflow.semantics.HELPERS`, the table's own functions).

_FORMATS = {"<d": "d", "<f": "f", "<q": "q", "<i": "i", "<h": "h", "<b": "b"}


def memref_view(sa: ShapedArray[Any]) -> memoryview:
    """A memoryview over `sa`'s bytes, cast to its element format (shares the memory);
    a memref of memrefs: its list."""
    ptr = sa.data_ptr
    if isinstance(ptr, ObjectStorage):
        return ptr  # type: ignore[return-value]
    fmt = _FORMATS.get(ptr.xtype.format)
    if fmt is None:
        raise InterpretationError(f"fast path: no memoryview format for {ptr.xtype}")
    size = ptr.xtype.compile_time_size
    n = math.prod(sa.shape)
    raw = ptr.raw
    return memoryview(raw.memory)[raw.offset : raw.offset + n * size].cast(fmt)


# ------------------------------------------------------------------------------------------
# The compiler.


def _int_width(t: Any) -> int | None:
    if isinstance(t, IndexType):
        return INDEX_BITWIDTH
    if isinstance(t, IntegerType):
        return t.width.data
    return None


def _affine_expr(e: AffineExpr, dims: Sequence[str], syms: Sequence[str]) -> str:
    if isinstance(e, AffineConstantExpr):
        return str(e.value)
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    if isinstance(e, AffineBinaryOpExpr):
        lhs = _affine_expr(e.lhs, dims, syms)
        rhs = _affine_expr(e.rhs, dims, syms)
        match e.kind:
            case AffineBinaryOpKind.Add:
                return f"({lhs} + {rhs})"
            case AffineBinaryOpKind.Mul:
                return f"({lhs} * {rhs})"
            case AffineBinaryOpKind.Mod:
                return f"({lhs} % {rhs})"
            case AffineBinaryOpKind.FloorDiv:
                return f"({lhs} // {rhs})"
            case AffineBinaryOpKind.CeilDiv:
                return f"(-((-{lhs}) // {rhs}))"
    raise TypeError(f"unknown affine expression {e}")


def _affine_plain(*maps: AffineMap) -> bool:
    """No `//` or `%` in the maps' Python: a loop kernel takes them (no integer division)."""
    kinds = (AffineBinaryOpKind.Add, AffineBinaryOpKind.Mul)
    return all(not isinstance(e, AffineBinaryOpExpr) or e.kind in kinds
               for m in maps for r in m.results for e in r.dfs())  # fmt: skip


def _affine_results(m: AffineMap, operands: Sequence[str]) -> list[str]:
    dims = operands[: m.num_dims]
    syms = operands[m.num_dims :]
    return [_affine_expr(r, dims, syms) for r in m.results]


Interval = tuple[int, int]


def _interval(sym: str, a: Interval, b: Interval) -> Interval:
    """[lo, hi] of `x sym y` for x in a, y in b (sym: + - *)."""
    if sym == "+":
        return a[0] + b[0], a[1] + b[1]
    if sym == "-":
        return a[0] - b[1], a[1] - b[0]
    products = [x * y for x in a for y in b]
    return min(products), max(products)


def _fits_i64(r: Interval | None) -> bool:
    return r is not None and _I64_MIN <= r[0] and r[1] <= _I64_MAX


def _affine_interval(
    e: AffineExpr, dims: Sequence[Interval | None], syms: Sequence[Interval | None]
) -> Interval | None:
    """[lo, hi] of an affine expression over operand ranges (None: unknown)."""
    if isinstance(e, AffineConstantExpr):
        return e.value, e.value
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    if not isinstance(e, AffineBinaryOpExpr):
        return None
    lhs = _affine_interval(e.lhs, dims, syms)
    rhs = _affine_interval(e.rhs, dims, syms)
    if lhs is None or rhs is None:
        return None
    match e.kind:
        case AffineBinaryOpKind.Add:
            return _interval("+", lhs, rhs)
        case AffineBinaryOpKind.Mul:
            return _interval("*", lhs, rhs)
        case AffineBinaryOpKind.Mod if rhs[0] == rhs[1] > 0:
            return 0, rhs[0] - 1
        case AffineBinaryOpKind.FloorDiv if rhs[0] == rhs[1] > 0:
            return lhs[0] // rhs[0], lhs[1] // rhs[0]
        case AffineBinaryOpKind.CeilDiv if rhs[0] == rhs[1] > 0:
            return -(-lhs[0] // rhs[0]), -(-lhs[1] // rhs[0])
        case _:
            return None


def _affine_ranges(m: AffineMap, operands: Sequence[Interval | None]) -> list[Interval | None]:
    dims, syms = operands[: m.num_dims], operands[m.num_dims :]
    return [_affine_interval(r, dims, syms) for r in m.results]


@dataclass
class _Stream:
    """The DRAM accesses of a bulk-counted loop body, when each one's offset is affine
    in the induction variable with a constant coefficient (`_for_loop` then also emits a
    variant without per-access `_A` calls: `Trace.stream` appends the addresses)."""

    iv: SSAValue
    inside: set[SSAValue]  # values defined in the body (not loop-invariant)
    sites: list[tuple[str, int]] = field(default_factory=list)
    """Per access in program order: (invariant part of the encoded access, iv coefficient)."""
    lines: set[int] = field(default_factory=set)  # indices of their `_A` lines
    ok: bool = True

    def affine(self, v: SSAValue, names: dict[SSAValue, str]) -> tuple[str, int] | None:
        """`v` as (invariant expression, constant coefficient of the iv), or None."""
        if v is self.iv:
            return "0", 1
        if v not in self.inside:
            return names[v], 0
        op = v.owner
        if not isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp) or not isinstance(
            v.type, IndexType
        ):
            return None
        x, y = self.affine(op.lhs, names), self.affine(op.rhs, names)
        if x is None or y is None:
            return None
        if isinstance(op, arith.AddiOp):
            return f"({x[0]} + {y[0]})", x[1] + y[1]
        if isinstance(op, arith.SubiOp):
            return f"({x[0]} - {y[0]})", x[1] - y[1]
        if y[1] == 0 and (x[1] == 0 or _is_int_literal(y[0])):
            return f"({x[0]} * {y[0]})", x[1] * (int(y[0].strip("()")) if x[1] else 0)
        if x[1] == 0 and _is_int_literal(x[0]):
            return f"({x[0]} * {y[0]})", y[1] * int(x[0].strip("()"))
        return None


def _is_int_literal(text: str) -> bool:
    return text.strip("()").lstrip("-").isdigit()


@dataclass
class _MemInfo:
    """Compile-time facts about a memref SSA value's Python locals."""

    obj: str  # the ShapedArray
    data: str  # memoryview
    base: str | None  # provisional buffer id + offset (encoded), None for the scratchpad
    strides: list[str]  # per-dimension stride expressions (constants or locals)
    esize: int  # element bytes
    dims: list[str]  # per-dimension sizes (constants or expressions)


_NESTING = (scf.ForOp, scf.IfOp, scf.WhileOp, affine.ForOp, func.CallOp)

EVENT_NAMES = frozenset(
    (
        "memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global",
        region.AllocOp.name, region.DeallocOp.name, *stream.OPS,
    )
)  # fmt: skip
"""Ops run as events (`Trace.event`): the interpreter's implementation, model hooks."""


def simple_body(block: Block) -> bool:
    """A loop body that is a single segment without events: counted in bulk."""
    return all(
        not op.regions and not isinstance(op, func.CallOp) and op.name not in EVENT_NAMES
        for op in block.ops
    )


class _FunctionCompiler:
    def __init__(self, cm: CompiledModule, fn: func.FuncOp):
        self.cm = cm
        self.fn = fn
        self.lines: Lines = []
        self.locals: set[str] = set()
        """Names of Python locals (what a statement's `reads` keeps: not literals)."""
        self.wide: set[str] = set()
        """Integer literals beyond int64 (no loop kernel takes a statement reading one)."""
        self.names: dict[SSAValue, str] = {}
        self.mem: dict[SSAValue, _MemInfo] = {}
        self.prov: dict[SSAValue, str] = {}  # record tapes and tape caches
        self.counter = 0
        self.has_access = False
        self.offsets: list[dict[tuple[str, tuple[str, ...]], str]] = []
        """Flat offsets computed (and checked) so far, per enclosing block (reused: same
        SSA indices)."""
        self.stream: _Stream | None = None
        """The bulk-counted loop body being emitted, if its accesses may be streamed."""
        self.records: dict[str, int] = {}
        """Record tape locals whose fields are all f64 -> field count (kernels take them)."""
        self.plain: dict[int, Lines] = {}
        """Variant id -> the plain loop lines it wraps (`jit.expand` puts them back)."""
        self.views: dict[str, str] = {}
        """memoryview locals -> their format if a loop kernel may index them ('d', 'q', 'i')."""
        self.ranges: dict[SSAValue, Interval] = {}
        """Proven [lo, hi] of integer values (constants, loop induction variables and
        index arithmetic on them)."""

    # -- naming ----------------------------------------------------------------------------
    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        self.locals.add(name := f"{prefix}{self.counter}")
        return name

    def define(self, value: SSAValue) -> str:
        name = self.fresh("v")
        self.names[value] = name
        return name

    def use(self, value: SSAValue) -> str:
        name = self.names.get(value)
        if name is None:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else self.fn
            raise UnsupportedOpError(op, f"fast path: value {value} used before definition")
        return name

    def emit(self, indent: int, text: str, kind: str = "", reads: Sequence[str] = (),
             writes: Sequence[str] = (), *data: Any) -> None:  # fmt: skip
        """A statement; without a `kind`, one no loop kernel takes."""
        kind = "" if self.wide.intersection(reads) else kind
        self.lines.append((indent, St(text, kind, self.local(reads), tuple(writes), data)))

    def local(self, names: Sequence[str]) -> tuple[str, ...]:
        return tuple(n for n in names if n in self.locals)

    def py(self, indent: int, text: str, reads: Sequence[str] = (), writes: Sequence[str] = (),
           ok: bool = True) -> None:  # fmt: skip
        """A statement a loop kernel takes as it is (if `ok`)."""
        self.emit(indent, text, "py" if ok else "", reads, writes)

    def variant(self, indent: int, loop: Lines) -> None:
        """Marks the start of an `if <faster variant> else: <loop>` block (`loop`: the
        plain loop's lines, at `indent`), so an enclosing kernel can take the plain loop."""
        v = len(self.plain)
        self.plain[v] = [(d - indent, st) for d, st in loop]
        self.emit(indent, f"# @variant {v}", "variant", (), (), v)

    # -- values that live in memory --------------------------------------------------------
    def bind(self, value: SSAValue, indent: int, origin: Operation) -> None:
        """Emit the locals that describe `value` if it is a memref, record tape or cache."""
        t = value.type
        name = self.names[value]
        if isinstance(t, MemRefType):
            self.bind_memref(value, name, t, indent, origin)
        elif t.name == "region.tape":
            fields = t.record.fields.data  # type: ignore[attr-defined]
            if all(isinstance(f, builtin.Float64Type) for f in fields):
                self.records[name] = len(fields)
            if not t.in_spm:  # type: ignore[attr-defined]
                self.prov[value] = f"{name}_a"
                self.locals.add(f"{name}_a")
                self.emit(indent, f"{name}_a = _RID({name})")
        elif t.name == "tape.cache":
            try:
                size = field_size(t.element_type)  # type: ignore[attr-defined]
            except VerifyException:
                raise UnsupportedOpError(origin, f"fast path: tape of {t}") from None
            self.prov[value] = f"{name}_a"
            self.emit(indent, f"{name}_a = _TID({name}, {size})")

    def bind_memref(
        self, value: SSAValue, name: str, t: MemRefType[Any], indent: int, origin: Operation
    ) -> None:
        if not isinstance(t.layout, builtin.NoneAttr):
            raise UnsupportedOpError(origin, f"fast path: memref layout {t.layout}")
        shape = list(t.get_shape())
        try:
            esize = element_size(t.element_type)
        except VerifyException:
            raise UnsupportedOpError(origin, f"fast path: memref of {t.element_type}") from None
        data = f"{name}_d"
        self.locals.update((data, f"{name}_a"))
        self.emit(indent, f"{data} = _view({name})")
        et = t.element_type
        wide_int = isinstance(et, IndexType) or _int_width(et) == 64
        i32 = _int_width(et) == 32
        f64 = isinstance(et, builtin.Float64Type)
        self.views[data] = "d" if f64 else "q" if wide_int else "i" if i32 else ""
        base: str | None = None
        if not is_spm(t.memory_space):
            base = f"{name}_a"
            self.emit(indent, f"{base} = _MID({name})")
        strides: list[str] = []
        acc: str | int = 1
        for k in reversed(range(len(shape))):
            strides.append(str(acc))
            if k > 0:
                if isinstance(acc, int) and shape[k] >= 0:
                    acc = acc * shape[k]
                else:
                    dim = str(shape[k]) if shape[k] >= 0 else f"{name}.shape[{k}]"
                    sname = f"{name}_s{k - 1}"
                    self.locals.add(sname)
                    self.emit(indent, f"{sname} = {acc} * {dim}")
                    acc = sname
        strides.reverse()
        dims = [str(d) if d >= 0 else f"{name}.shape[{k}]" for k, d in enumerate(shape)]
        self.mem[value] = _MemInfo(name, data, base, strides, esize, dims)

    # -- index ranges (what lets the generated code skip bounds checks and wrapping) -------
    def range_of(self, value: SSAValue) -> Interval | None:
        return self.ranges.get(value)

    def mem_access(
        self,
        indent: int,
        op: Operation,
        memval: SSAValue,
        indices: Sequence[str],
        write: bool,
        ranges: Sequence[Interval | None],
        reads: Sequence[str] | None = None,
        ok: bool = True,
    ) -> tuple[_MemInfo, str]:
        """The flat offset of an access (computed once per block and indices); indices
        not proven in bounds (`ranges`) are checked, and a failing check runs the
        interpreter's implementation of `op`, which reports the error. `reads`: the
        locals the indices read (default: `indices`); `ok`: a loop kernel may take them."""
        info = self.mem.get(memval)
        if info is None:
            raise UnsupportedOpError(op, "fast path: memref of unknown provenance")
        if len(indices) != len(info.dims):
            raise UnsupportedOpError(op, f"fast path: {len(indices)} indices for a memref of "
                                     f"rank {len(info.dims)}")  # fmt: skip
        strides = zip(indices, info.strides, strict=True)
        terms = [i if s == "1" else f"{i} * {s}" for i, s in strides]
        key = (info.obj, tuple(indices))
        known = next((scope[key] for scope in reversed(self.offsets) if key in scope), None)
        if known is not None:
            off = known
        else:
            checks = [
                (i, d)
                for i, d, r in zip(indices, info.dims, ranges, strict=True)
                if not (r is not None and d.isdigit() and 0 <= r[0] and r[1] < int(d))
            ]
            if checks:
                cond = " and ".join(f"0 <= {i} < {d}" for i, d in checks)
                args = [self.use(v) for v in op.operands]
                ok_check = ok and all(d.isdigit() for _, d in checks)
                checked = [i for i, _ in checks] if reads is None else reads
                self.check(indent, cond, op, args, checked, ok_check)
            reads = list(indices if reads is None else reads)
            if len(terms) == 1 and terms[0] in self.locals:
                off = terms[0]
            else:
                off = self.fresh("o")
                expr = " + ".join(terms) if terms else "0"
                self.py(indent, f"{off} = {expr}", [*reads, *info.strides], [off], ok)
            self.offsets[-1][key] = off
        if info.base is not None and not is_ideal_tape(op):  # a free tape access: no record
            sid = self.cm.new_sid(op)
            low = (sid << SID_SHIFT) | (1 if write else 0)
            col = self.stream
            if col is not None and col.ok:
                self.stream_site(col, op, memval, info, low)
            self.access(indent, f"{info.base} + {off} * {info.esize << OFF_SHIFT} + {low}",
                        [info.base, off])  # fmt: skip
        return info, off

    def access(self, indent: int, expr: str, reads: Sequence[str], kind: str = "access") -> None:
        """Records encoded access `expr` (`Trace`)."""
        self.emit(indent, f"_A({expr})", kind, reads, (), expr)
        self.has_access = True

    def check(self, indent: int, cond: str, op: Operation, args: Sequence[str],
              reads: Sequence[str], ok: bool = True) -> None:  # fmt: skip
        """If `cond` fails, the interpreter's implementation of `op` on `args` reports it."""
        text = f"if not ({cond}): _RUN({self.cm.const(op)}, ({', '.join(args)},))"
        k = self.cm.const_id(op)
        self.emit(indent, text, "check" if ok else "", [*reads, *args], (), cond, k, tuple(args),
                  self.local(reads), self.local(args))  # fmt: skip

    def stream_site(
        self, col: _Stream, op: Operation, memval: SSAValue, info: _MemInfo, low: int
    ) -> None:
        """Records the access about to be emitted as an affine stream site, if it is one."""
        indices = list(op.operands[2:] if isinstance(op, memref.StoreOp) else op.operands[1:])
        forms = [col.affine(v, self.names) for v in indices]
        if (
            memval in col.inside
            or not isinstance(op, memref.LoadOp | memref.StoreOp)
            or any(f is None for f in forms)
            or not all(s.isdigit() for s in info.strides)
        ):
            col.ok = False
            return
        esize = info.esize << OFF_SHIFT
        a = " + ".join(f"{f[0]} * {s}" for f, s in zip(forms, info.strides) if f) or "0"  # type: ignore[index]
        b = sum(f[1] * int(s) for f, s in zip(forms, info.strides) if f)  # type: ignore[index]
        col.sites.append((f"{info.base} + ({a}) * {esize} + {low}", b * esize))
        col.lines.add(len(self.lines))

    # -- blocks ----------------------------------------------------------------------------
    def segment(self, indent: int) -> list[Operation]:
        k, ops = self.cm.new_segment()
        self.emit(indent, f"if _BC[{k}]: _BC[{k}] += 1", "count", (), (), k, "1")
        self.emit(indent, f"else: _FIRST({k})", "first")
        self.emit(indent, f"_WN[0] += @@C{k}@@", "wn", (), (), f"@@C{k}@@")
        return ops

    def block(
        self,
        block: Block,
        indent: int,
        args: Sequence[str] | None = None,
        counted: list[Operation] | None = None,
    ) -> list[str]:
        """Emit `block`'s ops; returns the names of the terminator's operands.

        `counted`: the block is one segment whose counter the caller maintains (a loop
        body counted in bulk, see `simple_body`)."""
        if args is not None:
            for a, name in zip(block.args, args, strict=True):
                self.names[a] = name
        for a in block.args:
            if a in self.names and not isinstance(a.type, IndexType):
                self.bind(a, indent, block.parent_op() or self.fn)
        seg = counted if counted is not None else self.segment(indent)
        self.offsets.append({})
        yielded: list[str] = []
        last = block.last_op
        for op in block.ops:
            seg.append(op)
            self.cm.segment_of[op] = len(self.cm.segments) - 1
            if op is last and op.has_trait(_IsTerminator):
                yielded = self.terminator(op, indent)
            else:
                self.op(op, indent)
                if isinstance(op, _NESTING) and op is not last:
                    seg = self.segment(indent)
        self.offsets.pop()
        return yielded

    def terminator(self, op: Operation, indent: int) -> list[str]:
        if isinstance(op, func.ReturnOp):
            vals = [self.use(v) for v in op.operands]
            self.emit(indent, f"return ({', '.join(vals)}{',' if vals else ''})")
            return []
        if isinstance(op, scf.YieldOp | affine.YieldOp | scf.ConditionOp):
            return [self.use(v) for v in op.operands]
        raise UnsupportedOpError(op)

    def assign(self, indent: int, targets: Sequence[str], sources: Sequence[str]) -> None:
        pairs = [(t, s) for t, s in zip(targets, sources, strict=True) if t != s]
        if pairs:
            lhs, rhs = ", ".join(t for t, _ in pairs), ", ".join(s for _, s in pairs)
            self.py(indent, f"{lhs} = {rhs}", [s for _, s in pairs], [t for t, _ in pairs])

    def loop_header(self, indent: int, body: Block, bounds: Sequence[str], iv: str,
                    reads: Sequence[str], ok: bool) -> list[Operation] | None:  # fmt: skip
        """`for iv in range(*bounds):` (`reads`: the locals `bounds` read; `ok`: a kernel
        may take them); a simple body (one segment, no events) is counted in bulk
        before the loop (its ops get their PCs there, as they would at its first
        iteration), and gets no flush check. Returns that segment's op list."""
        rng = f"range({', '.join(bounds)})"
        if not simple_body(body):
            self.py(indent, f"for {iv} in {rng}:", reads, [iv], ok)
            return None
        k, ops = self.cm.new_segment()
        r, n, s = self.fresh("r"), self.fresh("n"), self.fresh("s")
        self.emit(indent, f"{r} = {rng}; {n} = len({r})", "range" if ok else "", reads, (r, n),
                  *bounds)  # fmt: skip
        self.py(indent, f"if {n}:", [n])
        self.emit(indent + 1, f"if _BC[{k}]: _BC[{k}] += {n}", "count", [n], (), k, n)
        self.emit(indent + 1, f"else: _FIRST({k}); _BC[{k}] += {n} - 1", "first")
        self.emit(indent + 1, f"_WN[0] += {n} * @@C{k}@@", "wn", [n], (), f"{n} * @@C{k}@@")
        self.emit(indent + 1, f"{s} = _WSTART({k}, {r}) if _WN[0] - _WN[1] >= _WIN else None",
                  "wstart", [r, n], [s], k, r, n)  # fmt: skip
        self.emit(indent, f"for {iv} in {r}:", "for", [r], [iv], r)
        self.bulk_end = St(f"if {iv} == {s}: {s} = _WBULK({k}, {r}, {iv})", "wbulk",
                           (iv, s, r, n), (s,), (k, r, n))  # fmt: skip
        self.bulk_names = (k, r, n, s)
        return ops

    def loop_end(self, indent: int, counted: list[Operation] | None) -> None:
        """At the end of a loop body: the phase-window check (hwmodel/model.py)."""
        if counted is not None:
            self.lines.append((indent, self.bulk_end))
        else:
            self.emit(indent, "if _WN[0] - _WN[1] >= _WIN: _WEND()", "wend")

    # -- ops -------------------------------------------------------------------------------
    def op(self, op: Operation, indent: int) -> None:
        gen = EMITTERS.get(op.name)
        if gen is not None:
            gen(self, op, indent)
            return
        self.fallback(op, indent)

    def fallback(self, op: Operation, indent: int) -> None:
        """An op without an inline translation: call the interpreter's implementation.

        Only for ops on scalars (no regions, no memory): they have no effect the hardware
        model charges beyond their op class, and their value is the interpreter's."""
        if op.regions:
            raise UnsupportedOpError(op)
        for v in (*op.operands, *op.results):
            if _int_width(v.type) is None and not isinstance(v.type, builtin.AnyFloat):
                raise UnsupportedOpError(op)
        if not self.cm.has_impl(op):
            raise UnsupportedOpError(op)
        k = self.cm.const(op)
        args = [self.use(v) for v in op.operands]
        res = [self.define(r) for r in op.results]
        call = f"_RUN({k}, ({', '.join(args)}{',' if args else ''}))"
        if res:
            self.emit(indent, f"{', '.join(res)}, = {call}")
        else:
            self.emit(indent, call)

    def event(self, op: Operation, indent: int) -> None:
        """An op the interpreter runs (and the hardware model hears of) as an event."""
        k = self.cm.new_event(op)
        args = [self.use(v) for v in op.operands]
        res = [self.define(r) for r in op.results]
        call = f"_EVENT({k}, ({', '.join(args)}{',' if args else ''}))"
        if res:
            self.emit(indent, f"{', '.join(res)}, = {call}")
        else:
            self.emit(indent, call)
        for r in op.results:
            self.bind(r, indent, op)

    def compile(self) -> str:
        fname = self.cm.py_name(self.fn.sym_name.data)
        if len(self.fn.body.blocks) > 1:
            raise UnsupportedOpError(self.fn, "fast path: unstructured control flow (cf)")
        entry = self.fn.body.blocks[0]
        params = [self.define(a) for a in entry.args]
        self.lines = []
        self.emit(1, f"def {fname}({', '.join(params)}):")
        self.block(entry, 2, params)
        return "\n".join("    " * d + st.text for d, st in self.lines)


# ------------------------------------------------------------------------------------------
# Op emitters. Each takes (compiler, op, indent).

Emitter = Callable[[_FunctionCompiler, Operation, int], None]
EMITTERS: dict[str, Emitter] = {}


def emitter(*names: str) -> Callable[[Emitter], Emitter]:
    def deco(fn: Emitter) -> Emitter:
        for n in names:
            EMITTERS[n] = fn
        return fn

    return deco


@emitter("arith.constant")
def _constant(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    """Constants become literals at their uses (or `_K[i]` for inf/nan)."""
    assert isinstance(op, arith.ConstantOp)
    value = op.value
    if isinstance(value, IntegerAttr):
        v = value.value.data
        if isinstance(value.type, IndexType):
            v = to_signed(v, INDEX_BITWIDTH)
        c.names[op.result] = f"({v!r})" if v < 0 else repr(v)
        c.ranges[op.result] = (v, v)
        if not _I64_MIN <= v <= _I64_MAX:
            c.wide.add(c.names[op.result])
    elif isinstance(value, FloatAttr):
        v = value.value.data
        if math.isfinite(v):
            c.names[op.result] = f"({v!r})" if math.copysign(1.0, v) < 0 else repr(v)
        else:
            c.names[op.result] = c.cm.const(v)
    else:
        c.fallback(op, indent)


_INT_BIN = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*"}
_INT_BITS = {"arith.andi": "&", "arith.ori": "|", "arith.xori": "^"}


def _bin(c: _FunctionCompiler, op: Operation) -> tuple[str, str, str]:
    return c.define(op.results[0]), c.use(op.operands[0]), c.use(op.operands[1])


def _rounded(c: _FunctionCompiler, op: Operation, indent: int, expr: str,
             reads: Sequence[str], jit_expr: str) -> None:  # fmt: skip
    """Emit `result = expr` rounded to the result's float type (f64 or f32,
    `_float_type_ok`); `jit_expr`: what a loop kernel computes instead."""
    r = c.names[op.results[0]]
    f32 = isinstance(op.results[0].type, builtin.Float32Type)
    text, jit_text = (f"{r} = _f32({e})" if f32 else f"{r} = {e}" for e in (expr, jit_expr))
    c.emit(indent, text, "py", reads, [r], jit_text)


def _float_type_ok(op: Operation) -> bool:
    return isinstance(op.results[0].type, builtin.Float64Type | builtin.Float32Type)


def _scalar(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    """A scalar op with an inline expression in the table (`tapeflow.semantics`): `float`
    entries for f64/f32 results (f32 rounded), `exact` ones for any float type."""
    entry = SCALARS[op.name]
    if entry.kind == "float" and not _float_type_ok(op):
        return c.fallback(op, indent)
    r = c.define(op.results[0])
    args = [c.use(v) for v in op.operands]
    expr = entry.inline.format(*args)  # type: ignore[union-attr]
    jit_expr = jit.INLINE.get(op.name, entry.inline).format(*args)  # type: ignore[union-attr]
    if entry.kind == "exact":
        c.emit(indent, f"{r} = {expr}", "py", args, [r], f"{r} = {jit_expr}")
    else:
        _rounded(c, op, indent, expr, args, jit_expr)


def _typed(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    """A `typed` table entry (casts): its inline form for these types, behind its check
    (a failing check runs the interpreter's op: its error); else the interpreter's op."""
    entry = SCALARS[op.name]
    tys = [scalar_type(v.type, INDEX_BITWIDTH) for v in (*op.operands, *op.results)]
    expr = None if None in tys else entry.inline_for(*tys)  # type: ignore[misc]
    if expr is None:
        return c.fallback(op, indent)
    args = [c.use(v) for v in op.operands]
    if entry.check is not None:
        c.check(indent, entry.check(*tys).format(*args), op, args, args)
    r = c.define(op.results[0])
    c.py(indent, f"{r} = {expr.format(*args)}", args, [r], all(t.width <= 64 for t in tys))  # type: ignore[union-attr]


for _entry in SCALARS.values():
    if _entry.inline is not None and _entry.kind in ("float", "exact"):
        EMITTERS[_entry.name] = _scalar
    elif _entry.inline_for is not None:
        EMITTERS[_entry.name] = _typed


@emitter(*_INT_BIN)
def _int_bin(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    w = _int_width(op.results[0].type)
    if w is None:
        return c.fallback(op, indent)
    sym = _INT_BIN[op.name]
    ra, rb = c.range_of(op.operands[0]), c.range_of(op.operands[1])
    rr = _interval(sym, ra, rb) if ra is not None and rb is not None else None
    if w == 64:
        a, b = c.use(op.operands[0]), c.use(op.operands[1])
        unit = "1" if sym == "*" else "0"
        if b == unit:  # x+0, x-0, x*1: the result is x's value
            kept: SSAValue | None = op.operands[0]
        elif a == unit and sym != "-":  # 0+x, 1*x (checked second: `0 + 0` keeps either)
            kept = op.operands[1]
        else:
            kept = None
        if kept is not None:
            c.names[op.results[0]] = c.use(kept)
            if (kr := c.range_of(kept)) is not None:
                c.ranges[op.results[0]] = kr
            return
        if rr is not None and rr[0] == rr[1]:  # both constants
            v = to_signed(rr[0], 64)
            c.names[op.results[0]] = f"({v})" if v < 0 else repr(v)
            c.ranges[op.results[0]] = (v, v)
            return
    r, a, b = _bin(c, op)
    if w == 64:
        c.py(indent, f"{r} = {a} {sym} {b}", [a, b], [r])
        if _fits_i64(rr):  # no wrap possible
            c.ranges[op.results[0]] = rr  # type: ignore[assignment]
        else:  # a kernel's int64 arithmetic wraps by itself
            c.emit(indent, f"if not {_I64_MIN} <= {r} <= {_I64_MAX}: {r} = _wrap({r}, 64)",
                   "wrap64", [r], [r])  # fmt: skip
    else:
        c.py(indent, f"{r} = _wrap(_wrap({a}, {w}) {sym} _wrap({b}, {w}), {w})", [a, b], [r],
             w < 64)  # fmt: skip


@emitter(*_INT_BITS)
def _int_bits(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    w = _int_width(op.results[0].type)
    if w is None:
        return c.fallback(op, indent)
    r, a, b = _bin(c, op)
    c.py(indent, f"{r} = _wrap(_wrap({a}, {w}) {_INT_BITS[op.name]} _wrap({b}, {w}), {w})",
         [a, b], [r], w <= 64)  # fmt: skip


@emitter("arith.shrsi")
def _shrsi(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    """A shift by a constant in [0, width): Python's `>>` on the signed value, as the
    interpreter computes it (arithmetic shift, no wrap needed)."""
    w = _int_width(op.results[0].type)
    b = _constant_value(c, op.operands[1])
    if w is None or b is None or not 0 <= b < w:
        return c.fallback(op, indent)
    r, a, _ = _bin(c, op)
    c.py(indent, f"{r} = {a if w == 64 else f'_wrap({a}, {w})'} >> {b}", [a], [r], w <= 64)
    if w == 64 and (ra := c.range_of(op.operands[0])) is not None:
        c.ranges[op.results[0]] = (ra[0] >> b, ra[1] >> b)


def _constant_value(c: _FunctionCompiler, v: SSAValue) -> int | None:
    r = c.range_of(v)
    return r[0] if r is not None and r[0] == r[1] else None


def _fold(c: _FunctionCompiler, op: Operation) -> bool:
    """Folds a 64-bit integer op of constants with the interpreter's own implementation
    (so the value is the interpreter's); False if an operand is not constant or the
    interpreter reports an error (then the op runs, and fails, at run time)."""
    values = [_constant_value(c, v) for v in op.operands]
    if any(v is None for v in values):
        return False
    try:
        (value,) = c.cm.run_op(op, tuple(values))
    except Exception:
        return False
    value = to_signed(int(value), 64)
    c.names[op.results[0]] = f"({value})" if value < 0 else repr(value)
    c.ranges[op.results[0]] = (value, value)
    return True


@emitter("arith.divsi", "arith.remsi", "arith.floordivsi")
def _int_div(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    w = _int_width(op.results[0].type)
    if w is None:
        return c.fallback(op, indent)
    if w == 64 and _fold(c, op):
        return
    r, a, b = _bin(c, op)
    rb = c.range_of(op.operands[1])
    if rb is None or rb[0] <= 0 <= rb[1]:  # a zero divisor: the interpreter's error
        c.emit(indent, f"if {b} == 0: _RUN({c.cm.const(op)}, ({a}, {b}))")
    entry = SCALARS[op.name]
    if w == 64 and entry.inline64:
        d = c.fresh("d") if any("{d}" in t for t in entry.inline64) else r
        for text in entry.inline64:
            c.emit(indent, text.format(a, b, r=r, d=d))
        return
    c.emit(indent, f"{r} = {entry.inline.format(a, b, w=w)}")  # type: ignore[union-attr]


_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}


@emitter("arith.cmpi")
def _cmpi(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, arith.CmpiOp)
    w = _int_width(op.lhs.type)
    if w is None:
        return c.fallback(op, indent)
    p = op.predicate.value.data
    if p not in _CMPI:
        return c.fallback(op, indent)
    x, y = _constant_value(c, op.lhs), _constant_value(c, op.rhs)
    if x is not None and y is not None:  # both constant: a literal
        x, y = cmpu(x, y, w) if p >= 6 else (to_signed(x, w), to_signed(y, w))
        c.names[op.results[0]] = repr(bool(eval(f"{x} {_CMPI[p]} {y}")))
        return
    r, a, b = _bin(c, op)
    if p >= 6:
        c.emit(indent, f"_x, _y = _cmpu({a}, {b}, {w})")
        c.emit(indent, f"{r} = _x {_CMPI[p]} _y")
    elif w == 64:
        c.py(indent, f"{r} = {a} {_CMPI[p]} {b}", [a, b], [r])
    else:
        c.py(indent, f"{r} = _wrap({a}, {w}) {_CMPI[p]} _wrap({b}, {w})", [a, b], [r], w < 64)


_CMPF = {
    0: "False",
    1: "{x} == {y}",
    2: "{x} > {y}",
    3: "{x} >= {y}",
    4: "{x} < {y}",
    5: "{x} <= {y}",
    6: "({x} != {y} and {x} == {x} and {y} == {y})",
    7: "({x} == {x} and {y} == {y})",
    8: "({x} == {y} or {x} != {x} or {y} != {y})",
    9: "not ({x} <= {y})",
    10: "not ({x} < {y})",
    11: "not ({x} >= {y})",
    12: "not ({x} > {y})",
    13: "{x} != {y}",
    14: "({x} != {x} or {y} != {y})",
    15: "True",
}


@emitter("arith.cmpf")
def _cmpf(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, arith.CmpfOp)
    r, a, b = _bin(c, op)
    c.py(indent, f"{r} = {_CMPF[op.predicate.value.data].format(x=a, y=b)}", [a, b], [r])


@emitter("arith.select")
def _select(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    if isinstance(op.operands[1].type, MemRefType):
        raise UnsupportedOpError(op, "fast path: select of memrefs")
    cond = c.use(op.operands[0])
    if cond in ("True", "False"):  # a constant condition (a folded cmpi): the operand
        chosen = op.operands[1] if cond == "True" else op.operands[2]
        c.names[op.results[0]] = c.use(chosen)
        if (rc := c.range_of(chosen)) is not None:
            c.ranges[op.results[0]] = rc
        return
    r = c.define(op.results[0])
    a, b = c.use(op.operands[1]), c.use(op.operands[2])
    c.py(indent, f"{r} = {a} if {cond} else {b}", [a, cond, b], [r])
    if a in c.records and b in c.records:  # double-buffered scratchpad tiles
        c.records[r] = c.records[a]
    ra, rb = c.range_of(op.operands[1]), c.range_of(op.operands[2])
    if ra is not None and rb is not None:
        c.ranges[op.results[0]] = (min(ra[0], rb[0]), max(ra[1], rb[1]))


# -- control flow ------------------------------------------------------------------------


@emitter("scf.for")
def _scf_for(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, scf.ForOp)
    lb, ub, step = c.use(op.lb), c.use(op.ub), c.use(op.step)
    iv_range = _iv_range(c.range_of(op.lb), c.range_of(op.ub), c.range_of(op.step))
    sr = c.range_of(op.step)
    const_step = sr[0] if sr is not None and sr[0] == sr[1] > 0 else None
    _for_loop(c, op, indent, (lb, ub, step), [lb, ub, step], True, op.iter_args, iv_range,
              const_step)  # fmt: skip


def _streamed_variant(
    c: _FunctionCompiler, indent: int, for_line: int, col: _Stream, iv: str, step: int
) -> None:
    """Rewrites the bulk-counted loop emitted from `for_line` as `if n >= Trace.stream_min:
    <the loop without _A calls, addresses appended by Trace.stream per window chunk>
    else: <the loop as emitted>`. Addresses, their order and the access count at every
    phase end are the per-access code's."""
    k, r, n, s = c.bulk_names
    loop = c.lines[for_line:]
    del c.lines[for_line:]
    extra = [i - for_line for i in col.lines]
    kinds = [st.kind for i, (_, st) in enumerate(loop) if i not in extra]
    if {"access", "tape", "copy"} & set(kinds):
        c.lines.extend(loop)  # an access that is not a stream site (tape, records, copy)
        return
    q, j = c.fresh("q"), c.fresh("j")
    sites = ", ".join(f"{a}, {b}" for a, b in col.sites)
    c.variant(indent, loop)
    c.emit(indent, f"if {n} >= _SMIN:")
    c.emit(indent + 1, f"{q} = ({sites},); {j} = {r}.start")
    for i, (d, st) in enumerate(loop):
        if i in extra:
            continue
        if st == c.bulk_end:
            st = St(f"if {iv} == {s}: _STREAM({j}, {iv} + {step}, {step}, {q}); {j} = {iv} + "
                    f"{step}; {s} = _WBULK({k}, {r}, {iv})")  # fmt: skip
        c.lines.append((d + 1, st))
    c.emit(indent + 1, f"_STREAM({j}, {r}.stop, {step}, {q})")
    c.emit(indent, "else:", "else")
    c.lines.extend((d + 1, st) for d, st in loop)


def _kernel_variant(
    c: _FunctionCompiler, op: Operation, indent: int, start: int, rng: str, carried: list[str]
) -> None:
    """Puts the loop emitted from line `start` under `if <hoisted checks pass and its numba
    kernel ran (Trace.jit_nest)>: <carried values> else: <the loop>`, if the loop nest is
    in the kernel subset (`tapeflow.hwmodel.jit`)."""
    loop = c.lines[start:]
    try:
        kernel = jit.nest_kernel(jit.expand(loop, c.plain), carried, c.views, c.cm.consts,
                                 _static_ops(c, op.regions[0].block), c.records)  # fmt: skip
    except jit.NotAKernel as why:
        c.cm.not_kernels.append((op, str(why)))
        return
    m = len(c.cm.kernels)
    c.cm.kernels.append(kernel)
    params = "".join(f"{p}, " for p in kernel.params)
    values = "".join(f"{v}, " for v in carried)
    guards = "".join(f"{g} and " for g in kernel.guards)
    j = c.fresh("j")
    del c.lines[start:]
    c.variant(indent, loop)
    objects = "".join(f"{o}, " for o in kernel.objects)
    c.emit(indent, f"if {guards}({j} := _JNEST({m}, len({rng}), ({params}), ({values}), "
                   f"({objects}))) is not None:")  # fmt: skip
    c.emit(indent + 1, f"{values} = {j}" if carried else "pass")
    c.emit(indent, "else:", "else")
    c.lines.extend((d + 1, st) for d, st in loop)


def _static_ops(c: _FunctionCompiler, block: Block) -> int:
    """Ops one execution of `block` runs, loops of constant trip count included (others
    counted once): what decides whether a kernel is worth compiling."""
    total = 0
    for op in block.ops:
        total += 1
        if isinstance(op, scf.ForOp):
            lb, ub, st = (c.range_of(v) for v in (op.lb, op.ub, op.step))
            trips = 1
            if lb and ub and st and lb[0] == lb[1] and ub[0] == ub[1] and st[0] == st[1] > 0:
                trips = max(0, -(-(ub[0] - lb[0]) // st[0]))
            total += trips * _static_ops(c, op.body.block)
        else:
            total += sum(_static_ops(c, r.block) for r in op.regions if r.blocks)
    return total


def _iv_range(lb: Interval | None, ub: Interval | None, step: Interval | None) -> Interval | None:
    """The induction variable's [lo, hi] inside a loop with a constant positive step."""
    if lb is None or ub is None or step is None or not step[0] == step[1] > 0:
        return None
    return lb[0], ub[1] - 1


def _for_loop(
    c: _FunctionCompiler,
    op: scf.ForOp | affine.ForOp,
    indent: int,
    bounds: Sequence[str],
    reads: Sequence[str],
    ok: bool,
    inits: Sequence[SSAValue],
    iv_range: Interval | None,
    step: int | None,
) -> None:
    """The `for` loop shared by `scf.for` and `affine.for`: `bounds` are the Python range's
    arguments (`reads`: the locals they read; `ok`: a kernel may take them), `inits` the
    initial values of the carried (iter_args) values, `step` the constant step if positive."""
    body = op.body.block
    if iv_range is not None:
        c.ranges[body.args[0]] = iv_range
    iv = c.fresh("i")
    carried = [c.fresh("c") for _ in inits]
    c.assign(indent, carried, [c.use(v) for v in inits])
    start = len(c.lines)
    counted = c.loop_header(indent, body, bounds, iv, reads, ok)
    for_line = len(c.lines) - 1
    if counted is not None and step is not None:
        inside = {r for o in body.walk() for r in o.results} | set(body.args[1:])
        c.stream = _Stream(body.args[0], inside)
    before = c.has_access
    c.has_access = False
    yielded = c.block(body, indent + 1, [iv, *carried], counted)
    c.assign(indent + 1, carried, yielded)
    c.loop_end(indent + 1, counted)
    col, c.stream = c.stream, None
    if col is not None and col.ok and col.sites:
        _streamed_variant(c, indent, for_line, col, iv, step)  # type: ignore[arg-type]
    if c.has_access and counted is None:
        c.emit(indent + 1, "if len(_T) >= _LIM: _FLUSH()", "flush")
    c.has_access = c.has_access or before
    if jit.enabled():
        _kernel_variant(c, op, indent, start, f"range({', '.join(bounds)})", carried)
    results = [c.define(r) for r in op.results]
    c.assign(indent, results, carried)
    for r in op.results:
        c.bind(r, indent, op)


@emitter("scf.if")
def _scf_if(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, scf.IfOp)
    cond = c.use(op.cond)
    results = [c.fresh("c") for _ in op.results]
    c.py(indent, f"if {cond}:", [cond])
    y = c.block(op.true_region.block, indent + 1)
    c.assign(indent + 1, results, y)
    c.py(indent + 1, "pass")
    if op.false_region.blocks:
        c.emit(indent, "else:", "else")
        y = c.block(op.false_region.block, indent + 1)
        c.assign(indent + 1, results, y)
        c.py(indent + 1, "pass")
    for r, name in zip(op.results, results, strict=True):
        c.names[r] = name
        c.bind(r, indent, op)


@emitter("scf.while")
def _scf_while(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, scf.WhileOp)
    before = op.before_region.block
    after = op.after_region.block
    bargs = [c.fresh("c") for _ in before.args]
    aargs = [c.fresh("c") for _ in after.args]
    results = [c.define(r) for r in op.results]
    c.assign(indent, bargs, [c.use(v) for v in op.arguments])
    c.emit(indent, "while True:")
    had = c.has_access
    c.has_access = False
    cond, *fwd = c.block(before, indent + 1, bargs)
    c.emit(indent + 1, f"if not {cond}:")
    c.assign(indent + 2, results, fwd)
    for r in op.results:
        c.bind(r, indent + 2, op)
    c.emit(indent + 2, "break")
    c.assign(indent + 1, aargs, fwd)
    y = c.block(after, indent + 1, aargs)
    c.assign(indent + 1, bargs, y)
    c.loop_end(indent + 1, None)
    if c.has_access:
        c.emit(indent + 1, "if len(_T) >= _LIM: _FLUSH()")
    c.has_access = c.has_access or had


@emitter("func.call")
def _call(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, func.CallOp)
    callee = op.callee.root_reference.data
    if callee not in c.cm.functions or not c.cm.functions[callee].body.blocks:
        raise UnsupportedOpError(op, f"fast path: call of external or unknown function @{callee}")
    args = [c.use(v) for v in op.operands]
    results = [c.define(r) for r in op.results]
    call = f"{c.cm.py_name(callee)}({', '.join(args)})"
    if results:
        c.emit(indent, f"{', '.join(results)}, = {call}")
    else:
        c.emit(indent, call)
    for r in op.results:
        c.bind(r, indent, op)


# -- affine ------------------------------------------------------------------------------


def _map_of(op: Operation, name: str) -> AffineMap:
    attr = op.properties.get(name) or op.attributes.get(name)
    assert isinstance(attr, AffineMapAttr)
    return attr.data


@emitter("affine.for")
def _affine_for(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.ForOp)
    lbm, ubm = op.lowerBoundMap.data, op.upperBoundMap.data
    lbo, ubo = [c.use(v) for v in op.lowerBoundOperands], [c.use(v) for v in op.upperBoundOperands]
    lbs, ubs = _affine_results(lbm, lbo), _affine_results(ubm, ubo)
    lb = lbs[0] if len(lbs) == 1 else f"max({', '.join(lbs)})"
    ub = ubs[0] if len(ubs) == 1 else f"min({', '.join(ubs)})"
    lbr = _affine_ranges(lbm, [c.range_of(v) for v in op.lowerBoundOperands])
    ubr = _affine_ranges(ubm, [c.range_of(v) for v in op.upperBoundOperands])
    iv_range = None
    if all(r is not None for r in (*lbr, *ubr)):
        lo = max(r[0] for r in lbr)  # type: ignore[index]
        hi = min(r[1] for r in ubr)  # type: ignore[index]
        step = op.step.value.data
        iv_range = _iv_range((lo, lo), (hi, hi), (step, step))
    step = op.step.value.data
    _for_loop(c, op, indent, (lb, ub, str(step)), [*lbo, *ubo], _affine_plain(lbm, ubm),
              op.inits, iv_range, step if step > 0 else None)  # fmt: skip


@emitter("affine.apply")
def _affine_apply(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.ApplyOp)
    args = [c.use(v) for v in op.operands]
    (e,) = _affine_results(op.map.data, args)
    r = c.define(op.results[0])
    c.py(indent, f"{r} = {e}", args, [r], _affine_plain(op.map.data))
    (r,) = _affine_ranges(op.map.data, [c.range_of(v) for v in op.operands])
    if r is not None:
        c.ranges[op.results[0]] = r


@emitter("affine.load")
def _affine_load(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.LoadOp)
    m = _map_of(op, "map")
    args = [c.use(v) for v in op.indices]
    ranges = _affine_ranges(m, [c.range_of(v) for v in op.indices])
    info, off = c.mem_access(indent, op, op.memref, _affine_results(m, args), False, ranges, args,
                             _affine_plain(m))  # fmt: skip
    _load_view(c, indent, info, off, c.define(op.result))


@emitter("affine.store")
def _affine_store(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.StoreOp)
    m = _map_of(op, "map")
    args = [c.use(v) for v in op.indices]
    ranges = _affine_ranges(m, [c.range_of(v) for v in op.indices])
    info, off = c.mem_access(indent, op, op.memref, _affine_results(m, args), True, ranges, args,
                             _affine_plain(m))  # fmt: skip
    _store_view(c, indent, info, off, c.use(op.value))


# -- memref ------------------------------------------------------------------------------


@emitter("memref.load")
def _load(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, memref.LoadOp)
    idx = [c.use(v) for v in op.indices]
    ranges = [c.range_of(v) for v in op.indices]
    info, off = c.mem_access(indent, op, op.memref, idx, False, ranges)
    _load_view(c, indent, info, off, c.define(op.res))
    c.bind(op.res, indent, op)  # a memref loaded from a memref of memrefs


@emitter("memref.store")
def _store(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, memref.StoreOp)
    idx = [c.use(v) for v in op.indices]
    ranges = [c.range_of(v) for v in op.indices]
    info, off = c.mem_access(indent, op, op.memref, idx, True, ranges)
    _store_view(c, indent, info, off, c.use(op.value))


def _load_view(c: _FunctionCompiler, indent: int, info: _MemInfo, off: str, r: str) -> None:
    """`r = <memref>[off]`: a loop kernel indexes memoryviews of f64, i64/index and i32."""
    c.py(indent, f"{r} = {info.data}[{off}]", [info.data, off], [r], bool(c.views[info.data]))


def _store_view(c: _FunctionCompiler, indent: int, info: _MemInfo, off: str, v: str) -> None:
    c.py(indent, f"{info.data}[{off}] = {v}", [info.data, off, v], (), bool(c.views[info.data]))


@emitter("memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global")
def _memref_event(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    c.event(op, indent)


@emitter("memref.cast", "memref.memory_space_cast", "memref.collapse_shape", "memref.expand_shape")
def _memref_view_op(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    k = c.cm.const(op)
    args = [c.use(v) for v in op.operands]
    (r,) = (c.define(v) for v in op.results)
    c.emit(indent, f"{r}, = _RUN({k}, ({', '.join(args)},))")
    c.bind(op.results[0], indent, op)


@emitter("memref.dim")
def _dim(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, memref.DimOp)
    src, idx = c.use(op.source), c.use(op.index)
    c.emit(indent, f"if not 0 <= {idx} < len({src}.shape): _RUN({c.cm.const(op)}, ({src}, {idx}))")
    c.emit(indent, f"{c.define(op.result)} = {src}.shape[{idx}]")


@emitter("memref.copy")
def _copy(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    src, dst = (c.use(v) for v in op.operands)
    s1 = c.cm.new_sid(op, 0)
    s2 = c.cm.new_sid(op, 1)
    c.emit(indent, f"_COPY({c.cm.const(op)}, {src}, {dst}, {s1}, {s2})", "copy")
    c.has_access = True


# -- tape --------------------------------------------------------------------------------


@emitter("tape.init")
def _tape_init(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    c.emit(indent, f"{c.define(op.results[0])} = []")
    c.bind(op.results[0], indent, op)


def _tape_elsize(op: Operation) -> int:
    return field_size(op.operands[0].type.element_type)  # type: ignore[attr-defined]


@emitter("tape.push")
def _tape_push(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    cache, value = (c.use(v) for v in op.operands)
    base = c.prov[op.operands[0]]
    low = (c.cm.new_sid(op) << SID_SHIFT) | 1
    c.access(indent, f"{base} + len({cache}) * {_tape_elsize(op) << OFF_SHIFT} + {low}", (), "tape")
    c.emit(indent, f"{cache}.append({value})")


@emitter("tape.pop")
def _tape_pop(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    cache = c.use(op.operands[0])
    base = c.prov[op.operands[0]]
    low = c.cm.new_sid(op) << SID_SHIFT
    c.emit(indent, f"if not {cache}: _POP_EMPTY({c.cm.const(op)})")
    c.access(indent, f"{base} + (len({cache}) - 1) * {_tape_elsize(op) << OFF_SHIFT} + {low}", (),
             "tape")  # fmt: skip
    c.emit(indent, f"{c.define(op.results[0])} = {cache}.pop()")


@emitter("tape.free")
def _tape_free(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    cache = c.use(op.operands[0])
    c.emit(indent, f"if {cache}: _FREE_NONEMPTY({c.cm.const(op)}, {cache})")


# -- region ------------------------------------------------------------------------------


@emitter("region.alloc", "region.dealloc")
def _region_event(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    c.event(op, indent)


def _record_access(c: _FunctionCompiler, op: Operation, indent: int, write: bool) -> str:
    """Checks and (for a DRAM tape) records the accesses of one region.read/write."""
    tape_v = op.operands[0]
    t, i = c.use(tape_v), c.use(op.operands[1])
    k = c.cm.const_id(op)
    c.emit(indent, f"if {t}.freed or {t}.dma is not None or not 0 <= {i} < {t}.count: "
                   f"_RCHECK(_K[{k}], {t}, {i})", "rcheck", [t, i], (), t, i, k)  # fmt: skip
    base = c.prov.get(tape_v)
    if base is not None:  # a DRAM tape: one access per field, as the model charges
        rec = tape_v.type.record  # type: ignore[attr-defined]
        p = c.fresh("p")
        c.py(indent, f"{p} = {base} + {i} * {rec.size << OFF_SHIFT}", [base, i], [p])
        for off, df, _ in record_fields(rec):  # the model's accesses (tapeflow.semantics.memory)
            c.access(indent, f"{p} + {encode(off, c.cm.new_sid(op, df), int(write))}", [p])
    return t


@emitter("region.write")
def _region_write(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    t = _record_access(c, op, indent, True)
    vals, i = [c.use(v) for v in op.operands[2:]], c.use(op.operands[1])
    c.emit(indent, f"{t}.records[{i}] = ({', '.join(vals)},)", "rwrite", [t, i, *vals], (), t, i,
           tuple(vals))  # fmt: skip


@emitter("region.read")
def _region_read(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    t = _record_access(c, op, indent, False)
    i = c.use(op.operands[1])
    rec = c.fresh("r")
    c.emit(indent, f"{rec} = {t}.records[{i}]", "rread", [t, i], [rec], rec, t, i)
    c.emit(indent, f"if {rec} is None: _RNONE({c.cm.const(op)}, {t}, {i})", "rnone", [rec, t, i],
           (), rec, c.cm.const_id(op), t, i)  # fmt: skip
    res = [c.define(r) for r in op.results]
    c.emit(indent, f"{', '.join(res)}, = {rec}", "rfields", [rec], res, tuple(res), rec)


# -- stream ------------------------------------------------------------------------------


@emitter(*sorted(stream.OPS))
def _stream_event(c: _FunctionCompiler, op: Operation, indent: int) -> None:
    c.event(op, indent)


# ------------------------------------------------------------------------------------------
# The compiled module.


class CompiledModule:
    """Every `func.func` of `module`, compiled to Python. Compile once, run many times.

    Static tables (indexed by what the generated code records):
    - `segments[k]`: the ops of straight-line segment `k` (a block, cut after every op
      with regions and every call); its counter counts its executions.
    - `mem_ops[sid]`: the op of each recorded memory access site, and `sids_of[op]`
      its `(sid, pc delta)` pairs (memref.copy has two: source and destination).
    - `event_ops[k]`: the ops run as events (allocation, DMA...).
    """

    def __init__(self, module: ModuleOp):
        self.module = module
        self.segments: list[list[Operation]] = []
        self.segment_of: dict[Operation, int] = {}
        self.mem_ops: list[Operation] = []
        self.sids_of: dict[Operation, list[tuple[int, int]]] = {}
        self.event_ops: list[Operation] = []
        self.kernels: list[jit.LoopKernel] = []
        """numba kernels of loop nests (`tapeflow.hwmodel.jit`), by `_JNEST` index."""
        self.not_kernels: list[tuple[Operation, str]] = []
        """Loops that got no kernel, and why (what to extend next)."""
        self.consts: list[Any] = []
        self._const_ids: dict[int, int] = {}
        self.functions: dict[str, func.FuncOp] = {}
        for op in module.walk():  # nested modules too, as `runner.find_function`
            if isinstance(op, func.FuncOp):
                if op.sym_name.data in self.functions:
                    raise UnsupportedOpError(op, "fast path: a second function of this name")
                self.functions[op.sym_name.data] = op
        self._fallback_interp: Any = None
        parts: list[str] = ["def _factory(_RT):"]
        parts.append("    _BC = _RT.block_counts; _FIRST = _RT.first")
        parts.append("    _T = _RT.accesses; _A = _T.append; _LIM = _RT.batch_size")
        parts.append("    _FLUSH = _RT.flush; _EVENT = _RT.event; _view = _memref_view")
        parts.append("    _MID = _RT.memref_id; _RID = _RT.records_id; _TID = _RT.tape_id")
        parts.append("    _RUN = _RT.run_op; _POP_EMPTY = _RT.pop_empty")
        parts.append("    _FREE_NONEMPTY = _RT.free_nonempty; _COPY = _RT.copy")
        parts.append("    _RCHECK = _RT.record_check; _RNONE = _RT.record_unwritten")
        parts.append("    _WN = _RT.window; _WIN = _RT.window_ops; _WEND = _RT.window_end")
        parts.append("    _WSTART = _RT.window_start; _WBULK = _RT.window_bulk")
        parts.append("    _STREAM = _RT.stream; _SMIN = _RT.stream_min")
        parts.append("    _JNEST = _RT.jit_nest")
        for fn in self.functions.values():
            if fn.body.blocks:
                try:
                    parts.append(_FunctionCompiler(self, fn).compile())
                except RecursionError:
                    raise UnsupportedOpError(fn, "fast path: the function nests too deeply") from None
                except (UnsupportedOpError, InterpretationError):
                    raise
                except Exception as error:  # IR the compiler does not expect: not this path's
                    raise UnsupportedOpError(
                        fn, f"fast path: cannot compile ({type(error).__name__}: {error})"
                    ) from error
        names = ", ".join(
            f"{n!r}: {self.py_name(n)}" for n, f in self.functions.items() if f.body.blocks
        )
        parts.append(f"    return {{{names}}}")
        if len(self.mem_ops) > SID_LIMIT:
            raise UnsupportedOpError(self.mem_ops[SID_LIMIT], "fast path: too many memory ops")
        self.event_set = set(self.event_ops)
        from tapeflow.hwmodel.model import is_charged, pc_count

        self.seg_charged = [sum(1 for op in seg if is_charged(op)) for seg in self.segments]
        """Charged ops (every class but `free`) per segment execution: the phase window."""
        self.pc_span = {
            op: n for seg in self.segments for op in seg if (n := pc_count(op)) != 1
        }
        """PCs an op occupies when not one (`tapeflow.hwmodel.model.pc_count`)."""
        source = "\n".join(parts) + "\n"
        charged = lambda m: str(self.seg_charged[int(m[1])])  # noqa: E731
        self.source = re.sub(r"@@C(\d+)@@", charged, source)
        for kernel in self.kernels:
            kernel.source = re.sub(r"@@C(\d+)@@", charged, kernel.source)
        self.floats = np.array([v if isinstance(v, float) else 0.0 for v in self.consts])
        """`_K` as a loop kernel sees it: its float constants (inf, nan)."""
        namespace: dict[str, Any] = dict(HELPERS)
        namespace["_K"] = self.consts
        namespace["_memref_view"] = memref_view
        try:
            code = compile(self.source, "<tapeflow-compiled>", "exec")
        except (SyntaxError, RecursionError, MemoryError) as error:
            # Python's own limits (e.g. "too many statically nested blocks" from 21 nested
            # loops): the op-by-op path has none of them.
            raise UnsupportedOpError(
                next(iter(self.functions.values()), module),
                f"fast path: the generated Python is beyond Python's limits "
                f"({type(error).__name__}: {error})",
            ) from None
        exec(code, namespace)
        self._factory = namespace["_factory"]

    # -- compile-time helpers --------------------------------------------------------------
    def py_name(self, sym: str) -> str:
        return "f_" + "".join(ch if ch.isalnum() else "_" for ch in sym) + f"_{len(sym)}"

    def new_segment(self) -> tuple[int, list[Operation]]:
        ops: list[Operation] = []
        self.segments.append(ops)
        return len(self.segments) - 1, ops

    def new_sid(self, op: Operation, pc_delta: int = 0) -> int:
        self.mem_ops.append(op)
        sid = len(self.mem_ops) - 1
        self.sids_of.setdefault(op, []).append((sid, pc_delta))
        return sid

    def new_event(self, op: Operation) -> int:
        self.event_ops.append(op)
        return len(self.event_ops) - 1

    def const(self, value: Any) -> str:
        """A compile-time object made available to the generated code as `_K[i]`."""
        return f"_K[{self.const_id(value)}]"

    def const_id(self, value: Any) -> int:
        key = id(value)
        if key not in self._const_ids:
            self._const_ids[key] = len(self.consts)
            self.consts.append(value)
        return self._const_ids[key]

    def has_impl(self, op: Operation) -> bool:
        interp = self.fallback_interpreter()
        return type(op) in interp._impls._impl_dict  # pyright: ignore[reportPrivateUsage]

    def fallback_interpreter(self) -> Any:
        if self._fallback_interp is None:
            from tapeflow.interpreters import make_interpreter

            self._fallback_interp = make_interpreter(self.module)
        return self._fallback_interp

    def run_op(self, op: Operation, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The interpreter's own implementation of `op` (no listeners); its errors are
        reported as the op-by-op run reports them (`interpreters.runtime_error`)."""
        try:
            return self.fallback_interpreter().run_op(op, args)
        except (RecursionError, FastPathLimit):
            raise
        except Exception as error:
            raise runtime_error(error, [op]) from error

    # -- running ---------------------------------------------------------------------------
    def run(
        self, entry: str, args: Sequence[Any], trace: Trace | None = None
    ) -> tuple[tuple[Any, ...], Trace]:
        """Calls `entry` with the interpreter's runtime values `args` (`ShapedArray` for
        memrefs, lists for caches...). Returns its results, as `Interpreter.call_op` does,
        and the trace (flushed)."""
        fn = self.functions.get(entry)
        if fn is None or not fn.body.blocks:
            raise InterpretationError(f"fast path: no function @{entry} with a body")
        trace = trace if trace is not None else Trace(self)
        rt = _Runtime(self, trace)
        fns = self._factory(rt)
        results = fns[entry](*args)
        trace.flush()
        return results, trace


def _record_arrays(buf: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """A record tape as a loop kernel takes it: field values, written flags, count."""
    vals = np.zeros((buf.count, len(buf.record.fields.data)), dtype=np.float64)
    written = np.zeros(buf.count, dtype=np.uint8)
    for i, rec in enumerate(buf.records):
        if rec is not None:
            vals[i] = rec
            written[i] = 1
    return vals, written, buf.count


def _kernel_error(program: CompiledModule, kind: str, op: Operation, values: list[Any]) -> None:
    """Raises the interpreter's error for a check that failed in a loop kernel."""
    if kind == "run":
        program.run_op(op, tuple(values))
    elif kind == "rcheck":
        check_record(op, *values)
    else:
        record_unwritten(op, *values)
    raise FastPathLimit(op_error(op, "fast path: a kernel's failed check passed in the interpreter"))


class _Runtime:
    """The objects the generated code closes over for one run."""

    def __init__(self, cm: CompiledModule, trace: Trace):
        self.trace = trace
        self.block_counts = trace.block_counts
        self.first = trace.first
        self.accesses = trace.accesses
        self.batch_size = trace.batch_size
        self.flush = trace.flush
        self.event = trace.event
        self.memref_id = trace.memref_id
        self.records_id = trace.records_id
        self.tape_id = trace.tape_id
        self.run_op = cm.run_op
        self.window = trace.window
        self.window_ops = trace.window_ops
        self.window_end = trace.window_end
        self.window_start = trace.window_start
        self.window_bulk = trace.window_bulk
        self.stream = trace.stream
        self.stream_min = trace.stream_min
        self.record_check = check_record
        self.record_unwritten = record_unwritten
        self.jit_nest = trace.jit_nest

    def pop_empty(self, op: Operation) -> None:
        self.run_op(op, ([],))  # the interpreter's error

    def free_nonempty(self, op: Operation, cache: list[Any]) -> None:
        self.run_op(op, (cache,))

    def copy(self, op: Operation, src: Any, dst: Any, sid_src: int, sid_dst: int) -> None:
        """memref.copy: the interpreter's copy, then every element read and written (the
        model charges a copy as element-wise accesses through the caches)."""
        self.run_op(op, (src, dst))
        t = self.trace
        for j, v in enumerate(mem_columns(*copy_charges(src, dst))[:3]):  # no scratchpad part
            t.dyn[j] += v
        for arr, sid, w in ((src, sid_src, 0), (dst, sid_dst, 1)):
            first = t.memref_id(arr) + encode(0, sid, w)
            t.accesses.extend(element_run(first, arr.size, arr.data_ptr.xtype.compile_time_size))
        if len(t.accesses) >= t.batch_size:
            t.flush()
