"""The hardware model's listener: an xDSL `Interpreter.Listener` that charges every op it
sees run.

`tapeflow.simulate.simulate(module, entry, args, machine)` runs `entry` through
`tapeflow.interpreters.make_interpreter(module, listeners=[model])`, so the values it
computes are the interpreter's, bit for bit; the listener only counts. What it charges
(each op's class and memory charges are `tapeflow.hwmodel.costs`'):

- every op: its op class (`[ops.*]` in the machine TOML: issue slots on a port, pJ);
  an `scf.yield`/`affine.yield` that closes a loop iteration is charged as `branch`
  (increment, compare, branch); constants and bookkeeping ops are `free`.
- `memref.load`/`memref.store` (and `affine.load`/`affine.store`) on a default-space
  memref: one access through L1/L2 (address = the buffer's base address + linear
  element offset * element size; each buffer, identified by its byte storage, gets a
  64-byte aligned base on first use, `tapeflow.semantics.memory.next_base`).
- a load/store tagged `tapeflow.ideal_tape` (`tapeflow-lower-tape{ideal_tape=true}`: the
  cached values of the Enzyme layout as gem5-SALAM's "ad" runs treat them): its op class
  only, and the `ideal_loads`/`ideal_stores` counts; no memory access, port or latency
  (it commits at once, as gem5-SALAM's tagged tape accesses do). So is an Enzyme-MLIR
  `enzyme.push`/`pop` so tagged (`tapeflow-enzyme-ideal-tape`).
- `tape.push`/`tape.pop` (a tape not yet lowered): a store/load of the element in an
  Enzyme-style growing array in DRAM (one array per cache), through the caches.
- `region.write`/`region.read` on a DRAM tape: one access per field, at
  `base + index * record.size + field offset`, through the caches. Each field access has
  its own PC, as on a real core, where each field is a separate load/store instruction:
  the stride prefetcher then sees one stream per field with a constant stride of one
  record (not 8-byte steps followed by record-size jumps under a single PC).
- PCs (the stride prefetcher's table index, `pc % prefetch.table_size`) are numbered in
  first-execution order; an op takes `pc_count(op)` consecutive PCs: one per field for
  region.read/write, two for memref.copy (its load stream and its store stream), one
  otherwise.
- memrefs in `#stream.spm` and `!region.tape<R, #stream.spm>`: scratchpad accesses. The
  bytes allocated there are checked against `spm.size` (exceeding it is an error) and the
  high-water mark is recorded.
- `stream.commit`/`stream.prefetch`: asynchronous DMA of one tile between DRAM and the
  scratchpad; `stream.acquire_*`/`stream.wait` stall until that DMA is done.

Timing: the counts are cut into phases and each phase is timed by the preset's rule
(`tapeflow.hwmodel.timing.rule_of`; the equations, the DMA schedule and the
simplifications are in hwmodel/timing/phases.py).

Energy (pJ) = sum(ops * e_op) + L1 word accesses * e_L1 + L2 word accesses * e_L2
            + SPM word accesses * e_SPM + DRAM bytes * e_DRAM + DMA transfers * e_engine
            + leakage,
where a core access is one word access, and a line moved in or out of a level is
line/8 word accesses at that level (hwmodel/report.py lists which counts feed each term);
e_L1/e_L2 scale with the level's capacity by the scratchpad's law
(`Machine.cache_access_energy_pj`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tapeflow.hwmodel.cache import DP_CYCLES, CacheParams, CacheSim
from tapeflow.hwmodel.config import OP_CLASSES, Machine, load_machine
from tapeflow.hwmodel.costs import (
    ACCESS_OPS,
    PUSH_OPS,
    RECORD_OPS,
    TAPE_OPS,
    buffer_memory,
    charge,
    classify,
    copy_charges,
    is_ideal_tape,
    is_loop_end,
    memory_charges,
    pc_count,
)
from tapeflow.hwmodel.timing import rule_of
from tapeflow.hwmodel.timing.datapath import Datapath
from tapeflow.hwmodel.timing.phases import (
    DMA_STALL,
    TERMS,
    dma_lead,
    dma_schedule,
    phase_kernel,
    phase_tables,
)
from tapeflow.dialects import region, stream
from tapeflow.dialects.region import element_size, is_spm
from tapeflow.semantics.memory import ADDR_SHIFT as _ADDR
from tapeflow.semantics.memory import FIRST_ADDRESS, PC_MASK, element_run, encode, next_base
from tapeflow.semantics.memory import address_span, record_fields, tape_base
from tapeflow.semantics.memory import PC_SHIFT as _PC
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import op_error
from tapeflow.interpreters.extra_ops import strided_layout

# Handler kinds.
_COMPUTE, _LOAD, _STORE, _TPUSH, _TPOP, _RWRITE, _RREAD, _LOOPEND, _IDEAL = range(9)
_ALLOC, _DEALLOC, _RALLOC, _RDEALLOC, _DMA, _ACQUIRE, _WAIT, _FIFO, _COPY = range(9, 18)
_FDEALLOC, _RGROW, _FGROW = 18, 19, 20

_CLASS_INDEX = {name: i for i, name in enumerate(OP_CLASSES)}


@dataclass
class _Transfer:
    kind: str  # "commit" (SPM -> DRAM) or "prefetch" (DRAM -> SPM)
    nbytes: int
    issue: float
    start: float
    index: int  # its slot in HardwareModel._tr_* (data start and end: the arbitration
    # between DMA and cache lines may delay it after it was issued)
    waited: bool = False


@dataclass
class Counts:
    """Everything the model counted, besides the cache simulator's own counters."""

    ops: list[int] = field(default_factory=lambda: [0] * len(OP_CLASSES))
    by_name: dict[str, int] = field(default_factory=dict)
    unclassified: dict[str, int] = field(default_factory=dict)
    loads: int = 0  # core loads, any memory
    stores: int = 0
    cache_bytes: int = 0  # bytes the core moved through L1
    spm_loads: int = 0
    spm_stores: int = 0
    spm_bytes: int = 0  # bytes the core moved to/from the scratchpad
    ideal_loads: int = 0  # free tape accesses (`is_ideal_tape`): counted, not in `loads`
    ideal_stores: int = 0
    dma_transfers: int = 0
    dma_bytes_to_dram: int = 0
    dma_bytes_to_spm: int = 0
    dma_stall: float = 0.0
    dma_stalls: int = 0
    spm_in_use: int = 0
    spm_high_water: int = 0
    tape_bytes: int = 0  # peak DRAM bytes of live tape storage
    tape_live: int = 0
    tape_spm_bytes: int = 0  # scratchpad bytes allocated for tape tiles (high-water)
    snapshot_bytes: int = 0  # peak DRAM bytes of live checkpoint snapshots
    snapshot_live: int = 0
    dp_static: int = 0  # the datapath rule's cycles of blocks without cache accesses


class HardwareModel(Interpreter.Listener):
    """Charges each interpreted op; see the module docstring for what and how."""

    def __init__(
        self,
        machine: Machine | None = None,
        *,
        backend: str = "auto",
        batch: int = 1 << 16,
        prefetch: bool | None = None,
    ):
        self.machine = machine or load_machine()
        self.cache = CacheSim(CacheParams.from_machine(self.machine, prefetch), backend)
        self.batch = batch
        self.counts = Counts()
        self._handlers: dict[Operation, tuple[Any, ...]] = {}
        self._pcs: dict[Operation, int] = {}
        self._next_pc = 0
        self._arrays: dict[int, tuple[Any, int, tuple[int, ...], int]] = {}
        self._bases: dict[int, tuple[Any, int]] = {}  # id(bytearray) -> (bytearray, base)
        self._next_addr = FIRST_ADDRESS
        self._tapes: dict[int, tuple[Any, int, int]] = {}  # id(list) -> (list, base, peak)
        self._buf: list[int] = []
        self._spm_objects: dict[int, tuple[Any, int]] = {}
        self._tape_objects: dict[int, tuple[Any, int]] = {}
        self._snapshot_objects: dict[int, int] = {}  # id(bytearray) -> bytes
        self._records: dict[int, tuple[Any, int]] = {}  # id(RecordBuffer) -> (obj, base)
        self._transfers: list[_Transfer] = []
        self._by_token: dict[int, tuple[Any, _Transfer]] = {}
        self._phases = 0
        self._closes = 0  # calls of _close_phase (DMA fences and window ends)
        self._win_start = 0  # charged ops at the last phase boundary
        m = self.machine
        self._window = int(m.raw["core"]["window_ops"])
        self._free = _CLASS_INDEX["free"]
        self._spm_capacity = m.spm_size
        # Phase timing state, as `close_phases` takes it (arrays for the numba kernel).
        numba = self.cache.backend == "numba"
        self._close_phases = phase_kernel(self.cache.backend)
        self.datapath: Datapath | None = None
        if rule_of(m) == "datapath":
            self.datapath = self.cache.datapath = Datapath(m, self._pcs, self.cache.backend)

        def ints(values: list[int]) -> Any:
            return np.array(values, dtype=np.int64) if numba else values

        def floats(values: list[float]) -> Any:
            return np.array(values, dtype=np.float64) if numba else values

        self._start_ops = ints([0] * len(OP_CLASSES))
        self._start_ls = ints([0, 0])
        self._start_ctr = ints(self.cache.raw_counters())
        self._closed = floats([0.0] * len(TERMS))  # the terms summed over closed phases
        self._tr_issue = floats([0.0] * 8)  # per transfer: when it was issued,
        self._tr_data = floats([0.0] * 8)  # when it takes the DRAM channel,
        self._tr_end = floats([0.0] * 8)  # when it ends (the first len(_transfers))
        self._tr_dur = floats([0.0] * 8)  # and its data time
        self._phase_st = ints([0, 0])  # phases, first transfer that may end after now
        cycles, ports, bin_dist, par = phase_tables(m)
        self._cycle_values = floats(cycles)
        self._port_codes = ints(ports)
        self._bin_dist = floats(bin_dist)
        self._par = floats(par)
        self._dma_lead = dma_lead(m)

    # ------------------------------------------------------------------ listener hooks

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        h = self._handlers.get(op)
        if h is None:
            h = self._classify(op)
        c = self.counts
        c.ops[h[1]] += 1
        if self.datapath is not None:
            c.dp_static += self.datapath.static_charge(op)
        kind = h[0]
        if kind == _COMPUTE:
            return
        if kind == _LOOPEND:
            ops = c.ops
            if sum(ops) - ops[self._free] - self._win_start >= self._window:
                self._close_phase()
            return
        if kind == _IDEAL:
            charge(c, *h[2], ideal=True)
            return
        if kind == _LOAD or kind == _STORE:
            charge(c, *h[3])
            if h[2]:  # scratchpad memref
                return
            if kind == _LOAD:
                array, indices = args[0], args[1:]
                write = 0
            else:
                array, indices = args[1], args[2:]
                write = 1
            if h[4] is not None:  # affine map: operands are its dims, then its symbols
                nd = h[4].num_dims
                indices = h[4].eval(indices[:nd], indices[nd:])
            info = self._arrays.get(id(array))
            if info is None:
                info = self._array_info(array)
            _, base, strides, size = info
            offset = 0
            for i, s in zip(indices, strides):
                offset += i * s
            self._buf.append(encode(base + offset * size, h[5], write))
            if len(self._buf) >= self.batch:
                self.flush()
            return
        if kind == _TPUSH or kind == _TPOP:
            cache = args[0]
            entry = self._tapes.get(id(cache))
            if entry is None:
                entry = (cache, tape_base(len(self._tapes)), 0)
            size = h[2][3]
            charge(c, *h[2])
            if kind == _TPUSH:
                pos = len(cache)
                write = 1
                if (pos + 1) * size > entry[2]:
                    entry = (cache, entry[1], (pos + 1) * size)
            else:
                pos = len(cache) - 1
                write = 0
                if pos < 0:
                    return  # the interpreter reports the empty pop
            self._tapes[id(cache)] = entry
            self._buf.append(encode(entry[1] + pos * size, h[3], write))
            if len(self._buf) >= self.batch:
                self.flush()
            return
        if kind == _RWRITE or kind == _RREAD:
            self._record_access(op, h, args, kind == _RWRITE)
            return
        if kind == _COPY:
            self._copy(h, args)
            return
        if kind == _RGROW:
            size = region.grown(args[0].count, int(args[1])) * args[0].record_bytes
            self._grow(args[0], size)
            return
        if kind == _FGROW:
            size = region.grown(args[0].num_tiles, int(args[1])) * args[0].tile_bytes
            self._grow(args[0], size)
            return
        if kind == _ACQUIRE or kind == _WAIT:
            self._acquire(op, h, args)
            return
        if kind == _DEALLOC or kind == _RDEALLOC or kind == _FDEALLOC:
            obj = args[0]
            key = id(buffer_memory(obj)[0]) if kind == _DEALLOC else id(obj)
            entry = self._spm_objects.pop(key, None)
            if entry is not None:
                c.spm_in_use -= entry[1]
            entry = self._tape_objects.pop(key, None)
            if entry is not None:
                c.tape_live -= entry[1]
            c.snapshot_live -= self._snapshot_objects.pop(key, 0)
            return

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        h = self._handlers[op]
        kind = h[0]
        if kind < _ALLOC:
            return
        if kind == _ALLOC and h[2]:
            array = results[0]
            self._spm_alloc(op, id(buffer_memory(array)[0]), array, array.size * h[3])
        elif kind == _ALLOC and h[4]:
            array = results[0]
            self._tape_alloc(id(buffer_memory(array)[0]), array, array.size * h[3])
        elif kind == _ALLOC and h[5]:  # a checkpoint snapshot buffer (tapeflow-checkpoint)
            c = self.counts
            array = results[0]
            self._snapshot_objects[id(buffer_memory(array)[0])] = array.size * h[3]
            c.snapshot_live += array.size * h[3]
            c.snapshot_bytes = max(c.snapshot_bytes, c.snapshot_live)
        elif kind == _RALLOC:
            buf = results[0]
            if h[2]:
                self._spm_alloc(op, id(buf), buf, buf.size_bytes)
                tiles = sum(
                    b.size_bytes for b, _ in self._spm_objects.values() if hasattr(b, "size_bytes")
                )
                self.counts.tape_spm_bytes = max(self.counts.tape_spm_bytes, tiles)
            else:
                self._tape_alloc(id(buf), buf, buf.size_bytes)
        elif kind == _FIFO:
            self._tape_alloc(id(results[0]), results[0], results[0].size_bytes)
        elif kind == _DMA:
            self._dma(h, results[0])

    # ------------------------------------------------------------------ classification

    def _classify(self, op: Operation) -> tuple[Any, ...]:
        cls = classify(op)
        if not cls:
            self.counts.unclassified[op.name] = self.counts.unclassified.get(op.name, 0) + 1
            cls = "int"
        ci = _CLASS_INDEX[cls]
        name = op.name
        pc = self._pcs.get(op)
        if pc is None:
            pc = self._pcs[op] = self._next_pc & PC_MASK
            self._next_pc += pc_count(op)
        h: tuple[Any, ...] = (_LOOPEND, ci) if is_loop_end(op) else (_COMPUTE, ci)
        ch = memory_charges(op)
        if is_ideal_tape(op):
            h = (_IDEAL, ci, ch)
        elif name in ACCESS_OPS:
            amap = op.map.data if name.startswith("affine") else None  # type: ignore[attr-defined]
            h = (_LOAD if ch[0] else _STORE, ci, ch[2], ch, amap, pc)  # type: ignore[index]
        elif name in TAPE_OPS:
            h = (_TPUSH if name in PUSH_OPS else _TPOP, ci, ch, pc)
        elif name in RECORD_OPS:
            rec = op.operands[0].type.record  # type: ignore[attr-defined]
            h = (_RWRITE if name == region.WriteOp.name else _RREAD, ci, ch, rec.size,
                 record_fields(rec), pc)  # fmt: skip
        elif name in ("memref.alloc", "memref.alloca"):
            mtype = op.results[0].type
            is_tape = any(k.startswith("tapeflow.tape") for k in op.attributes)
            h = (_ALLOC, ci, is_spm(mtype.memory_space),  # type: ignore[attr-defined]
                 element_size(mtype.element_type), is_tape,  # type: ignore[attr-defined]
                 "tapeflow.snapshot" in op.attributes)  # checkpoint.SNAPSHOT_ATTR  # fmt: skip
        elif name == "memref.dealloc":
            h = (_DEALLOC, ci)
        elif name == "memref.copy":
            h = (_COPY, ci, pc, (pc + 1) & PC_MASK)
        elif name == region.AllocOp.name:
            h = (_RALLOC, ci, op.results[0].type.in_spm)  # type: ignore[attr-defined]
        elif name == region.DeallocOp.name:
            h = (_RDEALLOC, ci)
        elif name == region.ReserveOp.name:
            h = (_RGROW, ci)
        elif name == stream.FifoAllocOp.name:
            h = (_FIFO, ci)
        elif name == stream.FifoReserveOp.name:
            h = (_FGROW, ci)
        elif name == stream.FifoDeallocOp.name:
            h = (_FDEALLOC, ci)
        elif name in stream.DMA_OPS:
            h = (_DMA, ci, "commit" if name == stream.CommitOp.name else "prefetch")
        elif name in (stream.AcquireWriteOp.name, stream.AcquireReadOp.name):
            h = (_ACQUIRE, ci, name)
        elif name == stream.WaitOp.name:
            h = (_WAIT, ci, name)
        self._handlers[op] = h
        return h

    # ------------------------------------------------------------------ memory helpers

    def _base_of(self, memory: Any, nbytes: int) -> int:
        entry = self._bases.get(id(memory))
        if entry is None:
            base = self._next_addr
            self._next_addr = next_base(base, nbytes)
            entry = (memory, base)
            self._bases[id(memory)] = entry
        return entry[1]

    def records_base(self, buf: Any) -> int:
        """The base address of a DRAM record tape, given at its first access."""
        entry = self._records.get(id(buf))
        if entry is None:
            entry = (buf, self._next_addr)
            self._next_addr = next_base(self._next_addr, address_span(buf))
            self._records[id(buf)] = entry
        return entry[1]

    def _array_info(self, array: Any) -> tuple[Any, int, tuple[int, ...], int]:
        memory, offset, nbytes, size = buffer_memory(array)
        strides, start = strided_layout(array)  # a view (memref.subview): its own layout
        base = self._base_of(memory, nbytes) + offset + start * size
        info = (array, base, tuple(strides), size)
        self._arrays[id(array)] = info
        return info

    def _tape_alloc(self, key: int, obj: Any, nbytes: int) -> None:
        """DRAM tape storage allocated (marked memref, DRAM record tape, FIFO)."""
        c = self.counts
        self._tape_objects[key] = (obj, nbytes)
        c.tape_live += nbytes
        c.tape_bytes = max(c.tape_bytes, c.tape_live)

    def _grow(self, obj: Any, nbytes: int) -> None:
        """`region.reserve`/`stream.fifo_reserve` to `nbytes`: a growable tape or FIFO that
        grows holds its old and its new buffer while it is copied (the copy's accesses are
        not charged)."""
        entry = self._tape_objects.get(id(obj))
        if entry is None or nbytes == entry[1]:
            return
        c = self.counts
        c.tape_live += nbytes
        c.tape_bytes = max(c.tape_bytes, c.tape_live)
        c.tape_live -= entry[1]
        self._tape_objects[id(obj)] = (obj, nbytes)

    def _spm_alloc(self, op: Operation, key: int, obj: Any, nbytes: int) -> None:
        c = self.counts
        if c.spm_in_use + nbytes > self._spm_capacity:
            raise InterpretationError(
                op_error(
                    op,
                    f"scratchpad overflow: allocating {nbytes} bytes with {c.spm_in_use} "
                    f"bytes in use exceeds spm.size = {self._spm_capacity} bytes",
                )
            )
        self._spm_objects[key] = (obj, nbytes)
        c.spm_in_use += nbytes
        c.spm_high_water = max(c.spm_high_water, c.spm_in_use)

    def _record_access(self, op: Operation, h: tuple[Any, ...], args: Any, write: bool) -> None:
        charge(self.counts, *h[2])
        if h[2][2]:  # scratchpad tile buffer
            return
        buf = args[0]
        entry = self._records.get(id(buf))
        base = entry[1] if entry is not None else self.records_base(buf)
        start = base + int(args[1]) * h[3]
        pc = h[5]
        w = 1 if write else 0
        append = self._buf.append
        for off, df, _ in h[4]:
            append(encode(start + off, (pc + df) & PC_MASK, w))
        if len(self._buf) >= self.batch:
            self.flush()

    def _copy(self, h: tuple[Any, ...], args: Any) -> None:
        src, dst = args[0], args[1]
        charge(self.counts, *copy_charges(src, dst))
        for array, pc, w in ((src, h[2], 0), (dst, h[3], 1)):
            info = self._arrays.get(id(array)) or self._array_info(array)
            self._buf.extend(element_run(encode(info[1], pc, w), array.size, info[3]))
        if len(self._buf) >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Runs the buffered addresses through the cache simulator."""
        if not self._buf:
            return
        packed = np.array(self._buf, dtype=np.int64)
        self._buf.clear()
        self.cache.access_batch(packed >> _ADDR, (packed >> _PC) & PC_MASK, packed & 1)

    # ------------------------------------------------------------------ DMA and time

    def now(self) -> float:
        """Core time so far: closes the current phase (a DMA op is a fence), and returns
        the sum of the phases' T_core plus the DMA stalls so far."""
        self._close_phase()
        return float(self._closed[6]) + self.counts.dma_stall

    def _snapshot(self) -> tuple[list[int], int, int, list[int]]:
        c = self.counts
        counters = self.cache.raw_counters()
        counters[DP_CYCLES] += c.dp_static
        return (list(c.ops), c.loads, c.stores, counters)

    def _close_phase(self) -> None:
        self.flush()
        self.close_phase_at(self._snapshot())

    def close_phase_at(self, snap: tuple[list[int], int, int, list[int]]) -> None:
        """Closes the phase that ends at `snap` (op counts per class, loads, stores, raw
        cache counters: `_snapshot()` at that point)."""
        self.close_phases_at([snap[0]], [snap[1]], [snap[2]], [snap[3]])

    def close_phases_at(self, ops: Any, loads: Any, stores: Any, counters: Any) -> None:
        """`close_phase_at` for each row in turn (rows of op counts per class, loads,
        stores, rows of raw cache counters), in one call: the fast path replays its window
        phase ends here, a batch at a time."""
        n = len(loads)
        if n == 0:
            return
        last_ops = [int(x) for x in ops[-1]]
        if self.cache.backend == "numba":
            def flat(rows: Any) -> Any:
                return np.ascontiguousarray(rows, dtype=np.int64).ravel()
        else:
            def flat(rows: Any) -> Any:
                return [int(x) for row in rows for x in row]
        st = self._phase_st
        st[0] = 0
        par = self._par
        par[DMA_STALL] = self.counts.dma_stall
        self._close_phases(
            flat(ops), flat([loads]), flat([stores]), flat(counters), n, len(OP_CLASSES),
            self._start_ops, self._start_ls, self._start_ctr, self._closed, st,
            self._tr_issue, self._tr_data, self._tr_end, self._tr_dur, len(self._transfers),
            self._cycle_values,
            self._port_codes, self._bin_dist, par,
        )  # fmt: skip
        self._phases += int(st[0])
        self._closes += n
        self._win_start = sum(last_ops) - last_ops[self._free]

    def _dma(self, h: tuple[Any, ...], token: Any) -> None:
        """A commit/prefetch was issued (`token`: the stream interpreter's DmaToken)."""
        m = self.machine
        nbytes = int(token.bytes)
        issue = self.now()
        i = len(self._transfers)
        start, data_start, dur, end = dma_schedule(
            i, issue, nbytes, self._tr_end, int(m.get("dma", "in_flight")), self._dma_lead,
            int(m.get("dma", "request")), m.dma_bandwidth)
        t = _Transfer(h[2], nbytes, issue, start, i)
        self._transfers.append(t)
        if i == len(self._tr_end):  # grow the arrays (lists with the python backend)
            grown = [np.concatenate([a, np.zeros(i + 1)]) for a in
                     (self._tr_issue, self._tr_data, self._tr_end, self._tr_dur)]  # fmt: skip
            if self.cache.backend != "numba":
                grown = [a.tolist() for a in grown]
            self._tr_issue, self._tr_data, self._tr_end, self._tr_dur = grown
        self._tr_issue[i] = issue
        self._tr_data[i] = data_start
        self._tr_end[i] = end
        self._tr_dur[i] = dur
        self._by_token[id(token)] = (token, t)
        c = self.counts
        c.dma_transfers += 1
        if h[2] == "commit":
            c.dma_bytes_to_dram += nbytes
        else:
            c.dma_bytes_to_spm += nbytes

    def _acquire(self, op: Operation, h: tuple[Any, ...], args: Any) -> None:
        """An acquire/wait: stall until the DMA it waits for has ended."""
        if h[0] == _WAIT:
            token = args[0]
        elif len(args) > 1:
            token = args[1]
        else:
            token = getattr(args[0], "dma", None)
        if token is None:
            return
        entry = self._by_token.get(id(token))
        if entry is None or entry[1].waited:
            return
        transfer = entry[1]
        transfer.waited = True
        now = self.now()
        end = float(self._tr_end[transfer.index])  # after the phases' arbitration delays
        if end > now:
            self.counts.dma_stall += end - now
            self.counts.dma_stalls += 1

    def finish(self) -> dict[str, float]:
        """Closes the last phase; returns every timing term (summed over phases) with the
        stalls, the drain and the total."""
        self._close_phase()
        terms = {key: float(v) for key, v in zip(TERMS, self._closed)}
        if self.datapath is None:
            del terms["T_datapath"]
        busy = terms["T_core"] + self.counts.dma_stall
        last = max((float(self._tr_end[t.index]) for t in self._transfers), default=0.0)
        drain = max(0.0, last - busy)
        terms["T_dma_stall"] = self.counts.dma_stall
        terms["T_drain"] = drain
        terms["cycles"] = busy + drain
        for name, v in terms.items():
            if not math.isfinite(v) or v < 0:
                raise InterpretationError(f"hardware model: timing term {name} = {v}")
        return terms

    @property
    def tape_cache_bytes(self) -> int:
        """Peak bytes of un-lowered `tape.cache`s (as Enzyme-style arrays)."""
        return sum(peak for _, _, peak in self._tapes.values())
