"""A compiled module and its runs: `CompiledModule` loads the compiled source;
`CompiledModule.run` runs a function with a `Trace`, the record of one run (counters,
access stream, first executions, phase windows) that a model's adapter consumes
(`tapeflow.hwmodel.fastsim.ModelTrace`)."""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import op_error
from tapeflow.hwmodel import jit
from tapeflow.hwmodel.cache import numba_decoder
import tapeflow.hwmodel.compiled.loops  # noqa: F401  (each emitter module registers its ops
import tapeflow.hwmodel.compiled.memory  # noqa: F401  in compiler.EMITTERS on import)
import tapeflow.hwmodel.compiled.scalars  # noqa: F401
from tapeflow.hwmodel.compiled.compiler import ModuleCompiler
from tapeflow.hwmodel.compiled.limits import (
    BUF_LIMIT,
    BUF_SHIFT,
    OFF_LIMIT,
    OFF_SHIFT,
    SID_LIMIT,
    SID_SHIFT,
    FastPathLimit,
    UnsupportedOpError,
)
from tapeflow.hwmodel.costs import buffer_memory, copy_charges, mem_columns
from tapeflow.interpreters.extra_ops import ObjectStorage, StridedArray, strided_layout
from tapeflow.interpreters.region import check_record, record_unwritten
from tapeflow.semantics import HELPERS, wrap
from tapeflow.semantics.memory import FIRST_ADDRESS, PC_MASK, element_run, encode
from tapeflow.semantics.memory import address_span, next_base, tape_base

MEMREF, RECORDS, TAPE = "memref", "records", "tape"
"""The kinds of buffer a run records accesses to (`Trace.buffers`)."""


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
    included, before its kernel is compiled (`jit_load_after` when numba's cache has it):
    compiling (0.5-5 s) pays for itself only on long runs. Tests set 0."""

    jit_load_after = 100_000
    """The same for a kernel numba's cache has (`jit_after` when lower): loading one costs
    20-30 ms of CPU, and the Python loop runs this many ops in 3-10 ms (30-100 ns an op),
    so a nest loads its kernel only once waiting has cost less than a load, and the short
    nests of small inputs (`tapeflow-bench --quick`: 2,300 ops at most) run as Python."""

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
        out = self.run_event(k, op, args)
        if op.name == "region.reserve" and args[0].size_bytes >= OFF_LIMIT:
            raise FastPathLimit(f"fast path: a record tape grown to {args[0].size_bytes} bytes")
        return out

    def stream(self, start: int, stop: int, step: int, sites: tuple[int, ...]) -> None:
        """The accesses of iterations `range(start, stop, step)` of a streamed loop: per
        iteration, each site's `invariant + coefficient * iv` (`Stream`), in order."""
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
            after = min(self.jit_after, self.jit_load_after) if kernel.on_disk else self.jit_after
            if kernel.seen < after:
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
            fields = list(map(tuple, vals.tolist()))
            if not written.all():
                fields = [f if w else None for f, w in zip(fields, written.tolist())]
            t.records[:] = fields
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

    # -- phase windows (the model's `core.window_ops` rule, hwmodel/timing/phases.py) -------
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
        size = size if kind == MEMREF else address_span(obj)
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
    if isinstance(sa, StridedArray):  # a view: its buffer up to the view's last element
        n = sa.start + sum((d - 1) * s for d, s in zip(sa.shape, sa.strides)) + 1 if n else 0
    raw = ptr.raw
    return memoryview(raw.memory)[raw.offset : raw.offset + n * size].cast(fmt)


class CompiledModule(ModuleCompiler):
    """Every `func.func` of `module`, compiled to Python (`ModuleCompiler`: the source and
    its static tables) and loaded. Compile once, run many times."""

    def __init__(self, module: ModuleOp):
        super().__init__(module)
        namespace: dict[str, Any] = dict(HELPERS)
        namespace["_K"] = self.consts
        namespace["_memref_view"] = memref_view
        namespace["_strided_layout"] = strided_layout
        namespace["_StridedArray"] = StridedArray
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
    width = len(buf.record.fields.data)
    recs = buf.records
    written = np.fromiter((r is not None for r in recs), dtype=np.uint8, count=buf.count)
    if not written.all():
        zero = (0.0,) * width
        recs = [zero if r is None else r for r in recs]
    vals = np.array(recs, dtype=np.float64).reshape(buf.count, width)
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
