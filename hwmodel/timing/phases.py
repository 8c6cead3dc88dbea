"""The phase timing rule: how the counts of a phase become core cycles, and the DMA
transfers' schedule on the DRAM channel they share with the caches.

The listener (`tapeflow.hwmodel.listener.HardwareModel`) counts; it closes phases here
(`close_phases`, `phase_kernel`) and schedules each DMA transfer here (`dma_schedule`).
Which of the equations of T_phase below a preset uses is `tapeflow.hwmodel.timing.rule_of`.

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
    T_phase = max(T_datapath, T_L2, T_DRAM) + T_late                (datapath.enabled)
      T_datapath = the cycles of the phase's block instances, each scheduled in lockstep
      steps over its dependence graph with op and access latencies (timing/datapath.py)
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
  core (only port and bandwidth limits and uncovered DRAM misses cost time). With it and
  without the datapath rule, memory latencies stall the datapath, but without a
  dependence graph the model cannot tell which accesses share a lockstep step:
  `lockstep_mlp` is one number for the whole run, and op latencies are not charged. The
  datapath rule (accel-salam) schedules each block's dependence graph instead.
- With core.overlap = "sum" (the CPU preset), memory terms add up within a phase
  (ECM-style), which charges cached traffic more than "max" would, while DMA overlaps
  the core fully (up to its stalls): this favours TapeFlow; accel-salam-overlap uses "max".
- Freed buffers' addresses are not reused; leakage = `leakage.sram_mw_per_kib` (CACTI) x
  the design's own SRAM capacity (the scratchpad only when used) x time; no register-file
  or instruction-overhead energy unless configured.

"""

from __future__ import annotations

from typing import Any

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
    bin_distance,
    numba_copies,
)
from tapeflow.hwmodel.config import OP_CLASSES, Machine
from tapeflow.hwmodel.timing import RULES, rule_of

TERMS = ("T_OL", "T_nOL", "T_L2", "T_DRAM", "T_exposed", "T_late", "T_core", "T_hit",
         "T_datapath")
"""The timing terms `close_phases` sums over closed phases, in its `closed` order."""

# Phase timing. Plain Python, as the cache kernel (hwmodel/cache.py): with the numba
# backend `phase_kernel` compiles a copy, so a batch of phase ends (the fast path's) is
# timed in one call, with the same float operations in the same order as the Python copy.
# Each phase end is a row: op counts per class (`ops`, `ncls` per row), loads, stores, raw
# cache counters (`ctr`, N_COUNTERS per row). `start_*` hold the phase start (updated),
# `closed` the summed terms (in `TERMS` order, updated), `st` = [phases closed (added
# to), first transfer that may end after the phase start (in `tr_data`/`tr_end`)].
_PORT_OTHER, _PORT_FP, _PORT_DIV = range(3)
# The rules `close_phases` applies, in `timing.RULES` order.
_SUM, _MAX, _LOCKSTEP, _DATAPATH = range(4)
# Slots of the `par` array of `close_phases` (`phase_tables`).
_ISSUE, _FP_PORTS, _DIV_PORTS, _LOAD_PORTS, _STORE_PORTS, _LINE, _L2_BW = range(7)
_DRAM_BW, _DRAM_LAT, _MLP, _RULE, DMA_STALL = range(7, 12)
_HAS_L1, _LOCK_MLP, _LAT_L1, _LAT_L2, _LAT_SPM = range(12, 17)
_DMA_VIA_L2, _DMA_SLOTS, _DMA_LEAD = range(17, 20)


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
        now0 = closed[6] + par[DMA_STALL]
        need = dram_lines * par[_LINE] / par[_DRAM_BW]
        if par[_DMA_VIA_L2] != 0:
            need = max2(need, t_l2)
        k = st[1]
        while k < ntr and tr_end[k] <= now0:
            k += 1
        st[1] = k
        t_dram = share_channel(now0, need, k, tr_issue, tr_data, tr_end, tr_dur, ntr, par)
        demand = ctr[q + DRAM_DEMAND_RD] - start_ctr[DRAM_DEMAND_RD]
        rule = par[_RULE]  # the preset's timing rule (`timing.rule_of`)
        t_dp = 0.0
        if rule == _DATAPATH:
            # The datapath rule (timing/datapath.py): its block instances' cycles, every
            # access's latency included; the L2 link's and DRAM's times still bound it.
            t_dp = float(ctr[q + DP_CYCLES] - start_ctr[DP_CYCLES])
            t_hit = 0.0
            t_exp = 0.0
            t_core = max2(max2(t_dp, t_l2), t_dram)
        elif rule == _LOCKSTEP:
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
        elif rule == _MAX:
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


def phase_kernel(backend: str) -> Any:
    """`close_phases` for the cache simulator's backend (numba: a compiled copy)."""
    global _NUMBA_PHASES
    if backend != "numba":
        return close_phases
    if _NUMBA_PHASES is None:
        _NUMBA_PHASES = numba_copies(_PHASE_FUNCS, globals())["close_phases"]
    return _NUMBA_PHASES



def phase_tables(m: Machine) -> tuple[list[float], list[int], list[float], list[float]]:
    """What `close_phases` reads of machine `m`: issue slots per op class (`cycles`), the
    port code per op class (`ports`), the prefetch histogram's bin distances (`bin_dist`)
    and the parameters (`par`, in the slot order above), with `m`'s timing rule."""
    core = m.raw["core"]
    ops = m.ops  # built on each access
    cycles = [float(ops[name].cycles) for name in OP_CLASSES]
    codes = {"div": _PORT_DIV, "fp": _PORT_FP}
    ports = [codes.get(ops[name].port, _PORT_OTHER) for name in OP_CLASSES]
    bin_dist = [bin_distance(b) for b in range(PF_BINS)]
    par = [float(x) for x in (
        core["issue_width"], core["fp_ports"], core["div_ports"], core["load_ports"],
        core["store_ports"], m.l1.line, m.l2.bandwidth, m.get("dram", "bandwidth"),
        m.get("dram", "latency"), core["mlp"], RULES.index(rule_of(m)), 0,
        1 if m.has_l1 else 0, core["lockstep_mlp"],
        m.get("l1", "latency"), m.get("l2", "latency"), m.spm_latency,
        1 if m.get("dma", "path") == "l2" else 0, m.get("dma", "in_flight"), dma_lead(m),
    )]  # fmt: skip
    return cycles, ports, bin_dist, par


def dma_lead(m: Machine) -> float:
    """Cycles from a transfer's start to its first data: setup, then the first request's
    DRAM latency."""
    return float(m.get("dma", "setup")) + float(m.get("dram", "latency"))


def dma_schedule(i: int, issue: float, nbytes: int, tr_end: Any, slots: int, lead: float,
                 request: int, bandwidth: float) -> tuple[float, float, float, float]:  # fmt: skip
    """(start, data start, data time, end) of transfer `i` (of `nbytes`) issued at core
    time `issue`, after transfers 0..i-1 that end at `tr_end`: it starts its setup once one
    of the `slots` in flight is free, then waits the first request's DRAM latency (`lead`
    from its start), then moves its data (whole requests of `request` bytes at
    `bandwidth`) once the previous transfer's data is done (the latency of one overlaps the
    data of the other). `retime_transfers` redoes this for transfers delayed later."""
    start = issue
    if i >= slots:
        start = max(start, float(tr_end[i - slots]))
    pipe_free = float(tr_end[i - 1]) if i else 0.0
    data_start = max(start + lead, pipe_free)
    moved = -(-nbytes // request) * request  # whole requests
    dur = moved / bandwidth
    return start, data_start, dur, data_start + dur
