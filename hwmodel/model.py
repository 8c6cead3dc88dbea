"""The hardware model: an xDSL `Interpreter.Listener` that charges every op it sees run.

`tapeflow.simulate.simulate(module, entry, args, machine)` runs `entry` through
`tapeflow.interpreters.make_interpreter(module, listeners=[model])`, so the values it
computes are the interpreter's, bit for bit; the listener only counts. What it charges:

- every op: its op class (`[ops.*]` in the machine TOML: issue slots on a port, pJ);
  an `scf.yield`/`affine.yield` that closes a loop iteration is charged as `branch`
  (increment, compare, branch); constants and bookkeeping ops are `free`.
- `memref.load`/`memref.store` (and `affine.load`/`affine.store`) on a default-space
  memref: one access through L1/L2 (address = the buffer's base address + linear
  element offset * element size; each buffer, identified by its byte storage, gets a
  64-byte aligned base on first use, `tapeflow.semantics.memory.next_base`).
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

Timing (all in core cycles; N are counts, B bytes; the report prints every term):

    T_OL   = max(N_slots / issue_width, N_fp_slots / fp_ports,
                 N_div_cycles / div_ports)                              (arithmetic)
             (an op on port "div" takes one issue slot and `cycles` of a divider)
    T_nOL  = max(N_loads / load_ports, N_stores / store_ports)            (L1/SPM ports)
    T_L2   = (N_L1_fills + N_L1_writebacks) * line / BW_L2                (L1 <-> L2 lines)
             without an L1 (l1.size = 0): N_accesses * 8 / BW_L2 (a word per access)
    T_DRAM = time from the phase's start until the ONE DRAM channel has given the phase
             need = (N_DRAM_lines_read + N_DRAM_lines_written) * line / BW_DRAM of
             transfer time (with dma.path = "l2": max(need, T_L2), the DMA holding the
             L2 link too), shared with DMA transfers round-robin (below)  (shared)
    T_exp  = N_demand_DRAM_misses * lat_DRAM / MLP     (misses the prefetcher did not cover)
    T_late = sum over the phase's first demand hits on lines a prefetch brought from DRAM
             of max(0, lat_DRAM - d * r) / MLP, d = accesses between the prefetch request
             and the demand (a histogram bin's smallest d, hwmodel/cache.py), r = cycles
             per cache access (the phase's, or the run's so far when larger)
    T_phase = max(T_OL, T_nOL + T_L2 + T_DRAM) + T_exp + T_late   (core.overlap = "sum",
                                                                   ECM-style)
    T_phase = max(T_OL, T_nOL, T_L2, T_DRAM, T_exp) + T_late      (core.overlap = "max")
    T_phase = max(T_OL, T_nOL, T_L2, T_DRAM) + T_hit + T_exp + T_late   (core.lockstep)
      with lockstep (gem5-SALAM's lockstep_mode: nothing new is launched while an access
      is in flight), P = core.lockstep_mlp accesses overlapping per step:
      T_hit = (N_accesses * lat_first + N_L1_misses * lat_L2 + N_SPM_accesses * lat_SPM) / P,
      lat_first = l1.latency (l2.latency without an L1), T_exp = N_demand * lat_DRAM / P
    T_core = sum over phases of T_phase
    DMA i:  T_dma(i) = setup + lat_DRAM + ceil(B_i / request) * request / BW_dma,
            BW_dma = min(BW_DRAM, spm_port, and BW_L2 when dma.path = "l2") (the report
            names the one that binds); a transfer issued at core time t starts its setup
            once one of the `in_flight` slots is free; its data starts setup + lat_DRAM
            later (its first request's latency), and once the previous transfer's data is
            done (one data pipe: the DRAM channel; the latency of one overlaps the data of
            the other); it ends at end_i. Issuing it costs the `dma` op class's issue
            slots (stream.commit/stream.prefetch).
    Arbitration (`share_channel`): round-robin between the cache and the DMA engine. In a
            gap between transfers the phase's lines have the channel alone; while a
            transfer moves data both get half of it: the phase progresses at half rate
            and the transfer's end moves later by the channel time the phase used (later
            transfers are retimed: slots and pipe as above).
    stall at an acquire/wait of transfer i at core time now:  max(0, end_i - now)
    T      = T_core + sum(stalls) + T_drain,  T_drain = max(0, last end_i - (T_core+stalls))

Since phases, stalls and the drain do not overlap in time, and the channel carries DMA
data and cache lines one at a time, T >= (all DRAM bytes) / BW_DRAM.

Phases: the counts of a phase are timed by the T_phase equation, so work in one phase
cannot overlap port or memory time spent in another. A phase closes
- at every DMA op (commit, prefetch, acquire, wait): a fence; and
- at the end of the first loop iteration (the `scf.yield`/`affine.yield` closing an
  scf.for, affine.for or scf.while body) after at least `core.window_ops` charged ops
  (ops of every class but `free`) since the last phase end, whichever kind it was.
The window applies to every program alike: an out-of-order core overlaps arithmetic and
memory time only within a window of a few hundred instructions, so a long int-heavy
sweep followed by an fp-heavy one must not be averaged into one max(...) (before the
window, a program without DMA was ONE phase, while a streamed program was cut into
thousands by its DMA fences). "now" at a DMA op is the sum of the closed phases plus the
stalls so far (the cache batch is flushed first), so a DMA overlaps exactly the compute
the program does between issuing it and waiting for it. The compiled fast path ends
phases at the same ops with the same counts (`hwmodel/fastsim.py`).

Simplifications (stated, not hidden; they do not all favour one design):
- DMA and cache lines share the channel round-robin at phase granularity (a phase's
  lines as one requestor); no bank or row-buffer timing. A DMA transfer's later
  requests are taken as pipelined behind its first one's latency. With dma.path = "l2"
  DMA bytes cross the L2 link once and are charged as L2 word accesses, but do not
  allocate in the L2 (no pollution of the cache's contents is modelled).
- A late prefetch's distance is counted in cache accesses and turned into time with an
  average rate, not the exact cycle of the request (either way).
- Without core.lockstep, L1/L2/SPM hit latencies are taken as hidden by the out-of-order
  core (only port and bandwidth limits and uncovered DRAM misses cost time). With it
  (accel-salam), memory latencies stall the datapath, but without a dependence graph the
  model cannot tell which accesses share a lockstep step: `lockstep_mlp` is one number
  for the whole run. Op latencies are never charged (only throughput, e.g. the
  divider's `cycles`), although lockstep exposes them too (fadd 5 cycles in SALAM).
- With core.overlap = "sum" (the CPU preset), memory terms add up within a phase
  (ECM-style), which charges cached traffic more than "max" would, while DMA overlaps
  the core fully (up to its stalls): this favours TapeFlow; accel-salam uses "max".
- Freed buffers' addresses are not reused; leakage = `leakage.sram_mw_per_kib` (CACTI) x
  the design's own SRAM capacity (the scratchpad only when used) x time; no register-file
  or instruction-overhead energy unless configured.

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
from tapeflow.hwmodel.cache import (
    DP_CYCLES,
    DRAM_DEMAND_RD,
    DRAM_RD,
    DRAM_WR,
    L1_ACC,
    L1_FILL,
    L1_MISS,
    L1_WB,
    N_COUNTERS,
    PF_BINS,
    PF_DIST,
    CacheParams,
    CacheSim,
    bin_distance,
    numba_copies,
)
from tapeflow.hwmodel.config import OP_CLASSES, Machine, load_machine
from tapeflow.hwmodel.datapath import Datapath
from tapeflow.dialects import enzyme, region, stream, tape
from tapeflow.dialects.region import element_size, is_spm
from tapeflow.semantics import cost_class
from tapeflow.semantics.memory import ADDR_SHIFT as _ADDR
from tapeflow.semantics.memory import FIRST_ADDRESS, PC_MASK, element_run, encode, next_base
from tapeflow.semantics.memory import record_fields, tape_base
from tapeflow.semantics.memory import PC_SHIFT as _PC
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import op_error

# Handler kinds.
_COMPUTE, _LOAD, _STORE, _TPUSH, _TPOP, _RWRITE, _RREAD, _LOOPEND = range(8)
_ALLOC, _DEALLOC, _RALLOC, _RDEALLOC, _DMA, _ACQUIRE, _WAIT, _FIFO, _COPY = range(8, 17)
_FDEALLOC = 17

_CLASS_INDEX = {name: i for i, name in enumerate(OP_CLASSES)}
_TERMS = ("T_OL", "T_nOL", "T_L2", "T_DRAM", "T_exposed", "T_late", "T_core", "T_hit",
          "T_datapath")

_FREE = {
    "arith.constant", "memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global",
    "memref.cast", "memref.subview", "memref.reinterpret_cast", "memref.collapse_shape",
    "memref.expand_shape", "memref.view", "memref.dim", "memref.global", tape.InitOp.name,
    tape.FreeOp.name, enzyme.InitOp.name, region.AllocOp.name, region.DeallocOp.name,
    *(stream.OPS - stream.DMA_OPS), "scf.for", "affine.for",
    "scf.while", "func.func", "builtin.module", "scf.execute_region",
    "builtin.unrealized_conversion_cast",
}  # fmt: skip
_BRANCH = {"scf.if", "func.call", "func.return", "scf.condition", "cf.br", "cf.cond_br"}

# Enzyme-MLIR's tape ops (enzyme-autodiff) cost what their tape/memref twins cost (an
# enzyme.load/store's trailing sizes operands are not indices: zip stops at the rank).
_ACCESS_OPS = ("memref.load", "memref.store", "affine.load", "affine.store",
               enzyme.LoadOp.name, enzyme.StoreOp.name)  # fmt: skip
_PUSH_OPS = (tape.PushOp.name, enzyme.PushOp.name)
_TAPE_OPS = (*_PUSH_OPS, tape.PopOp.name, enzyme.PopOp.name)
_RECORD_OPS = (region.WriteOp.name, region.ReadOp.name)


def classify(op: Operation) -> str:
    """The op class (a key of `[ops.*]`) that `op` is charged as."""
    name = op.name
    if name in _FREE:
        return "free"
    if name in _BRANCH:
        return "branch"
    if name in ("scf.yield", "affine.yield"):
        return "branch" if is_loop_end(op) else "free"
    cls = cost_class(name)  # scalar ops: the table's class (tapeflow.semantics)
    if cls is not None:
        return cls
    if name in _ACCESS_OPS or name in _TAPE_OPS or name in _RECORD_OPS:
        return "mem"
    if name in stream.DMA_OPS:
        return "dma"
    return ""  # unknown: charged as `int`, and listed in the report


def memory_charges(op: Operation) -> tuple[int, int, bool, int] | None:
    """(loads, stores, in the scratchpad, bytes) one execution of a memory op is charged
    (the listener's rule, which `fastsim.op_charges` reuses); None for other ops."""
    name = op.name
    if name in _ACCESS_OPS:
        mtype = op.memref.type  # type: ignore[attr-defined]
        load = name.endswith("load")
        return (int(load), int(not load), is_spm(mtype.memory_space),
                element_size(mtype.element_type))  # fmt: skip
    if name in _TAPE_OPS:
        size = element_size(op.operands[0].type.element_type)  # type: ignore[attr-defined]
        return (0, 1, False, size) if name in _PUSH_OPS else (1, 0, False, size)
    if name in _RECORD_OPS:
        ttype = op.operands[0].type
        sizes = [element_size(f) for f in ttype.record.field_types]  # type: ignore[attr-defined]
        n = len(sizes)
        write = name == region.WriteOp.name
        return (0 if write else n, n if write else 0, ttype.in_spm, sum(sizes))  # type: ignore[attr-defined]
    return None


def copy_charges(src: Any, dst: Any) -> tuple[int, int, bool, int]:
    """`memory_charges` of one memref.copy from `src` to `dst` (it depends on their sizes):
    every element read and written through the caches (the listener's and the fast
    path's `_Runtime.copy` rule)."""
    return (src.size, dst.size, False,
            src.size * buffer_memory(src)[3] + dst.size * buffer_memory(dst)[3])  # fmt: skip


def mem_columns(loads: int, stores: int, spm: bool, nbytes: int) -> tuple[int, ...]:
    """What charges (`memory_charges`) add to the counts `MEM_COLUMNS` (the one rule the
    listener's `charge` and `fastsim.op_charges` apply)."""
    return (loads, stores, 0, loads, stores, nbytes) if spm else (loads, stores, nbytes, 0, 0, 0)


MEM_COLUMNS = ("loads", "stores", "cache_bytes", "spm_loads", "spm_stores", "spm_bytes")


def charge(c: Any, loads: int, stores: int, spm: bool, nbytes: int) -> None:
    """Adds charges (`memory_charges`) to the counts `c` (the `MEM_COLUMNS` of `Counts`)
    by `mem_columns`' rule."""
    dl, ds, dc, dsl, dss, dsb = mem_columns(loads, stores, spm, nbytes)
    c.loads += dl
    c.stores += ds
    c.cache_bytes += dc
    c.spm_loads += dsl
    c.spm_stores += dss
    c.spm_bytes += dsb


def is_loop_end(op: Operation) -> bool:
    """An `scf.yield`/`affine.yield` that ends an iteration of an scf.for, affine.for or
    scf.while body: where a phase may close after `core.window_ops` charged ops."""
    if op.name not in ("scf.yield", "affine.yield"):
        return False
    parent = op.parent_op()
    return parent is not None and parent.name in ("scf.for", "affine.for", "scf.while")


def is_charged(op: Operation) -> bool:
    """True when `op` counts towards the phase window (every op class but `free`)."""
    return classify(op) != "free"


def pc_count(op: Operation) -> int:
    """How many PCs (instruction addresses) `op` occupies: one per field for a
    region.read/write (each field is its own load/store instruction), two for memref.copy
    (its load and its store), one otherwise. PCs are numbered in first-execution order."""
    if op.name in _RECORD_OPS:
        return max(1, len(op.operands[0].type.record.field_types))  # type: ignore[attr-defined]
    if op.name == "memref.copy":
        return 2
    return 1


def buffer_memory(array: Any) -> tuple[Any, int, int, int]:
    """(memory object, byte offset, bytes, element bytes) of a memref's storage. A memref
    of memrefs (a growable tape's slot) holds its elements in a list (`ObjectStorage`):
    each is a pointer, 8 bytes."""
    ptr = array.data_ptr
    raw = getattr(ptr, "raw", None)
    if raw is None:
        return ptr, 0, 8 * len(ptr), 8
    return raw.memory, raw.offset, len(raw.memory), ptr.xtype.compile_time_size


# Phase timing. Plain Python, as the cache kernel (hwmodel/cache.py): with the numba
# backend `_phase_kernel` compiles a copy, so a batch of phase ends (the fast path's) is
# timed in one call, with the same float operations in the same order as the Python copy.
# Each phase end is a row: op counts per class (`ops`, `ncls` per row), loads, stores, raw
# cache counters (`ctr`, N_COUNTERS per row). `start_*` hold the phase start (updated),
# `closed` the summed terms (in `_TERMS` order, updated), `st` = [phases closed (added
# to), first transfer that may end after the phase start (in `tr_data`/`tr_end`)].
_PORT_OTHER, _PORT_FP, _PORT_DIV = range(3)
# Slots of the `par` array of `close_phases`.
_ISSUE, _FP_PORTS, _DIV_PORTS, _LOAD_PORTS, _STORE_PORTS, _LINE, _L2_BW = range(7)
_DRAM_BW, _DRAM_LAT, _MLP, _OVERLAP_MAX, _DMA_STALL = range(7, 12)
_HAS_L1, _LOCKSTEP, _LOCK_MLP, _LAT_L1, _LAT_L2, _LAT_SPM = range(12, 18)
_DMA_VIA_L2, _DMA_SLOTS, _DMA_LEAD, _DATAPATH = range(18, 22)


def max2(a: float, b: float) -> float:
    """Python's `max(a, b)` (the first of equal values), in both backends."""
    return b if b > a else a


def retime_transfers(k: int, tr_issue: Any, tr_data: Any, tr_end: Any, tr_dur: Any,
                     ntr: int, par: Any) -> None:  # fmt: skip
    """Transfer k was delayed (its `tr_end` moved): transfers after it start their setup
    once an in-flight slot is free and move data once the previous transfer's data is done,
    as `HardwareModel._dma` scheduled them, with the new ends."""
    slots = int(par[_DMA_SLOTS])
    for j in range(k + 1, ntr):
        start = tr_issue[j]
        if j >= slots:
            start = max2(start, tr_end[j - slots])
        data = max2(start + par[_DMA_LEAD], tr_end[j - 1])
        if data <= tr_data[j]:
            return  # not delayed: neither are the later ones
        tr_data[j] = data
        tr_end[j] = data + tr_dur[j]


def share_channel(now0: float, need: float, k: int, tr_issue: Any, tr_data: Any,
                  tr_end: Any, tr_dur: Any, ntr: int, par: Any) -> float:  # fmt: skip
    """When the phase starting at `now0` has had `need` cycles of the channel that DMA
    transfers k.. also use. Round-robin arbitration between the two requestors (the cache
    and the DMA engine): in a gap the phase has the channel alone; while a transfer moves
    data both get half of it, so the phase progresses at half rate and the transfer is
    delayed by the channel time the phase used (later transfers are retimed)."""
    t = now0
    left = need
    while k < ntr and left > 0:
        if tr_end[k] <= t:
            k += 1
            continue
        gap = max2(0.0, tr_data[k] - t)
        if left <= gap:
            break
        left -= gap
        t = max2(t, tr_data[k])
        rest = tr_end[k] - t  # the transfer's data time still to go
        if left <= rest:  # the phase ends first, after 2 * left of shared time
            t += 2.0 * left
            tr_end[k] += left
            left = 0.0
        else:  # the transfer ends first, after 2 * rest
            t += 2.0 * rest
            tr_end[k] += rest
            left -= rest
        retime_transfers(k, tr_issue, tr_data, tr_end, tr_dur, ntr, par)
        k += 1
    return t + max2(0.0, left) - now0


def close_phases(ops: Any, loads: Any, stores: Any, ctr: Any, n: int, ncls: int,
                 start_ops: Any, start_ls: Any, start_ctr: Any, closed: Any, st: Any,
                 tr_issue: Any, tr_data: Any, tr_end: Any, tr_dur: Any, ntr: int,
                 cycles: Any, ports: Any, bin_dist: Any, par: Any) -> None:  # fmt: skip
    """Closes the phases ending at rows 0..n-1 (module docstring's T_* equations)."""
    for i in range(n):
        o = i * ncls
        q = i * N_COUNTERS
        same = loads[i] == start_ls[0] and stores[i] == start_ls[1]
        j = 0
        while same and j < ncls:
            same = ops[o + j] == start_ops[j]
            j += 1
        j = 0
        while same and j < N_COUNTERS:
            same = ctr[q + j] == start_ctr[j]
            j += 1
        if same:
            continue  # nothing ran since the last phase end: no new phase
        slots = 0.0
        fp_slots = 0.0
        div_slots = 0.0
        for j in range(ncls):
            cnt = ops[o + j] - start_ops[j]
            if cnt == 0:
                continue
            cyc = cycles[j]
            if ports[j] == _PORT_DIV:  # one issue slot; the divider is busy `cyc` cycles
                slots += cnt
                div_slots += cnt * cyc
                continue
            slots += cnt * cyc
            if ports[j] == _PORT_FP:
                fp_slots += cnt * cyc
        t_ol = max2(max2(slots / par[_ISSUE], fp_slots / par[_FP_PORTS]),
                    div_slots / par[_DIV_PORTS])  # fmt: skip
        t_nol = max2((loads[i] - start_ls[0]) / par[_LOAD_PORTS],
                     (stores[i] - start_ls[1]) / par[_STORE_PORTS])  # fmt: skip
        l1_lines = (ctr[q + L1_FILL] - start_ctr[L1_FILL] + ctr[q + L1_WB]
                    - start_ctr[L1_WB])  # fmt: skip
        dram_lines = (ctr[q + DRAM_RD] - start_ctr[DRAM_RD] + ctr[q + DRAM_WR]
                      - start_ctr[DRAM_WR])  # fmt: skip
        accesses = ctr[q + L1_ACC] - start_ctr[L1_ACC]
        if par[_HAS_L1] != 0:
            t_l2 = l1_lines * par[_LINE] / par[_L2_BW]
        else:  # no L1: every core access crosses the L2 link (a word each)
            t_l2 = accesses * 8.0 / par[_L2_BW]
        # T_DRAM: from the phase start until the channel has given the cache `need` cycles;
        # DMA transfers hold it during their data time, shared round-robin with the cache
        # (`share_channel`). With dma.path = "l2" the DMA also holds the L2 link, so the
        # phase needs the shared path for the larger of its DRAM and link times.
        now0 = closed[6] + par[_DMA_STALL]
        need = dram_lines * par[_LINE] / par[_DRAM_BW]
        if par[_DMA_VIA_L2] != 0:
            need = max2(need, t_l2)
        k = st[1]
        while k < ntr and tr_end[k] <= now0:
            k += 1
        st[1] = k
        t_dram = share_channel(now0, need, k, tr_issue, tr_data, tr_end, tr_dur, ntr, par)
        demand = ctr[q + DRAM_DEMAND_RD] - start_ctr[DRAM_DEMAND_RD]
        t_dp = 0.0
        if par[_DATAPATH] != 0:
            # The datapath rule (hwmodel/datapath.py): its block instances' cycles, every
            # access's latency included; bandwidths still bound the phase.
            t_dp = float(ctr[q + DP_CYCLES] - start_ctr[DP_CYCLES])
            t_hit = 0.0
            t_exp = 0.0
            t_core = max2(max2(t_dp, t_l2), t_dram)
        elif par[_LOCKSTEP] != 0:
            # Lockstep: the datapath launches nothing new while a load, store or compute op
            # is in flight, so every access's latency stalls it (`lockstep_mlp` accesses of
            # a step overlap): the first level's hit latency, an L1 miss's L2 latency, a
            # DRAM miss's latency; scratchpad accesses their SPM latency.
            spm_acc = (loads[i] - start_ls[0]) + (stores[i] - start_ls[1]) - accesses
            lat = accesses * (par[_LAT_L1] if par[_HAS_L1] != 0 else par[_LAT_L2])
            if par[_HAS_L1] != 0:
                lat += (ctr[q + L1_MISS] - start_ctr[L1_MISS]) * par[_LAT_L2]
            lat += max2(0.0, spm_acc) * par[_LAT_SPM]
            t_hit = lat / par[_LOCK_MLP]
            t_exp = demand * par[_DRAM_LAT] / par[_LOCK_MLP]
            t_core = max2(max2(max2(t_ol, t_nol), t_l2), t_dram) + t_hit + t_exp
        elif par[_OVERLAP_MAX] != 0:
            t_hit = 0.0
            t_exp = demand * par[_DRAM_LAT] / par[_MLP]
            t_core = max2(max2(max2(max2(t_ol, t_nol), t_l2), t_dram), t_exp)
        else:
            t_hit = 0.0
            t_exp = demand * par[_DRAM_LAT] / par[_MLP]
            t_core = max2(t_ol, t_nol + t_l2 + t_dram) + t_exp
        # Late prefetches: a line requested d accesses before its demand had about
        # d * (cycles per access) to arrive: the phase's rate, or the run's so far when
        # larger (the request may lie in an earlier, slower phase). The rest of the DRAM
        # latency is charged like an exposed miss (bins give the smallest d of their range).
        t_late = 0.0
        late = False
        for b in range(PF_BINS):
            if ctr[q + PF_DIST + b] != start_ctr[PF_DIST + b]:
                late = True
        if accesses != 0 and late:
            per_access = max2(t_core / accesses, (closed[6] + t_core) / ctr[q + L1_ACC])
            for b in range(PF_BINS):
                cnt = ctr[q + PF_DIST + b] - start_ctr[PF_DIST + b]
                if cnt != 0:
                    t_late += cnt * max2(0.0, par[_DRAM_LAT] - bin_dist[b] * per_access)
            t_late /= par[_MLP]
        closed[0] += t_ol
        closed[1] += t_nol
        closed[2] += t_l2
        closed[3] += t_dram
        closed[4] += t_exp
        closed[5] += t_late
        closed[6] += t_core + t_late
        closed[7] += t_hit
        closed[8] += t_dp
        for j in range(ncls):
            start_ops[j] = ops[o + j]
        start_ls[0] = loads[i]
        start_ls[1] = stores[i]
        for j in range(N_COUNTERS):
            start_ctr[j] = ctr[q + j]
        st[0] += 1


_PHASE_FUNCS = (max2, retime_transfers, share_channel, close_phases)
_NUMBA_PHASES: Any = None


def _phase_kernel(backend: str) -> Any:
    global _NUMBA_PHASES
    if backend != "numba":
        return close_phases
    if _NUMBA_PHASES is None:
        _NUMBA_PHASES = numba_copies(_PHASE_FUNCS, globals())["close_phases"]
    return _NUMBA_PHASES


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
        core = m.raw["core"]
        self._cycles = [m.ops[name].cycles for name in OP_CLASSES]
        self._issue, self._fp_ports = core["issue_width"], core["fp_ports"]
        self._div_ports = core["div_ports"]
        self._overlap_max = core["overlap"] == "max"
        self._load_ports, self._store_ports = core["load_ports"], core["store_ports"]
        self._l2_bw = m.l2.bandwidth
        self._dram_bw = m.get("dram", "bandwidth")
        self._dram_lat = m.get("dram", "latency")
        self._mlp = core["mlp"]
        self._spm_capacity = m.spm_size
        self._line = m.l1.line
        # Phase timing state, as `close_phases` takes it (arrays for the numba kernel).
        numba = self.cache.backend == "numba"
        self._close_phases = _phase_kernel(self.cache.backend)
        self.datapath: Datapath | None = None
        if m.get("datapath", "enabled"):
            self.datapath = self.cache.datapath = Datapath(m, self._pcs, self.cache.backend)

        def ints(values: list[int]) -> Any:
            return np.array(values, dtype=np.int64) if numba else values

        def floats(values: list[float]) -> Any:
            return np.array(values, dtype=np.float64) if numba else values

        self._start_ops = ints([0] * len(OP_CLASSES))
        self._start_ls = ints([0, 0])
        self._start_ctr = ints(self.cache.raw_counters())
        self._closed = floats([0.0] * len(_TERMS))  # the terms summed over closed phases
        self._tr_issue = floats([0.0] * 8)  # per transfer: when it was issued,
        self._tr_data = floats([0.0] * 8)  # when it takes the DRAM channel,
        self._tr_end = floats([0.0] * 8)  # when it ends (the first len(_transfers))
        self._tr_dur = floats([0.0] * 8)  # and its data time
        self._phase_st = ints([0, 0])  # phases, first transfer that may end after now
        ports = {"div": _PORT_DIV, "fp": _PORT_FP}
        self._port_codes = ints([ports.get(m.ops[name].port, _PORT_OTHER) for name in OP_CLASSES])
        self._cycle_values = floats([float(x) for x in self._cycles])
        self._bin_dist = floats([bin_distance(b) for b in range(PF_BINS)])
        self._dma_lead = float(m.get("dma", "setup")) + float(self._dram_lat)
        self._par = floats([float(x) for x in (
            self._issue, self._fp_ports, self._div_ports, self._load_ports, self._store_ports,
            self._line, self._l2_bw, self._dram_bw, self._dram_lat, self._mlp,
            1 if self._overlap_max else 0, 0,
            1 if m.has_l1 else 0, 1 if core["lockstep"] else 0, core["lockstep_mlp"],
            m.get("l1", "latency"), m.get("l2", "latency"), m.spm_latency,
            1 if m.get("dma", "path") == "l2" else 0, m.get("dma", "in_flight"),
            self._dma_lead, 1 if self.datapath is not None else 0,
        )])  # fmt: skip

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
        if name in _ACCESS_OPS:
            amap = op.map.data if name.startswith("affine") else None  # type: ignore[attr-defined]
            h = (_LOAD if ch[0] else _STORE, ci, ch[2], ch, amap, pc)  # type: ignore[index]
        elif name in _TAPE_OPS:
            h = (_TPUSH if name in _PUSH_OPS else _TPOP, ci, ch, pc)
        elif name in _RECORD_OPS:
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
        elif name == stream.FifoAllocOp.name:
            h = (_FIFO, ci)
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
            self._next_addr = next_base(self._next_addr, buf.size_bytes)
            self._records[id(buf)] = entry
        return entry[1]

    def _array_info(self, array: Any) -> tuple[Any, int, tuple[int, ...], int]:
        memory, offset, nbytes, size = buffer_memory(array)
        base = self._base_of(memory, nbytes) + offset
        shape = array.shape
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
        info = (array, base, tuple(strides), size)
        self._arrays[id(array)] = info
        return info

    def _tape_alloc(self, key: int, obj: Any, nbytes: int) -> None:
        """DRAM tape storage allocated (marked memref, DRAM record tape, FIFO)."""
        c = self.counts
        self._tape_objects[key] = (obj, nbytes)
        c.tape_live += nbytes
        c.tape_bytes = max(c.tape_bytes, c.tape_live)

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
        par[_DMA_STALL] = self.counts.dma_stall
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
        slots = int(m.get("dma", "in_flight"))
        i = len(self._transfers)
        start = issue
        if i >= slots:
            start = max(start, float(self._tr_end[i - slots]))
        # Setup, then the first request's DRAM latency, then the data once the previous
        # transfer's data is done (the latency of one overlaps the data of the other).
        pipe_free = float(self._tr_end[i - 1]) if i else 0.0
        data_start = max(start + self._dma_lead, pipe_free)
        request = int(m.get("dma", "request"))
        moved = -(-nbytes // request) * request  # whole requests
        dur = moved / m.dma_bandwidth
        end = data_start + dur
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
        terms = {key: float(v) for key, v in zip(_TERMS, self._closed)}
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
