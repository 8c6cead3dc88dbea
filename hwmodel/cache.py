"""Two-level set-associative cache with a PC-indexed stride prefetcher.

`l1.size = 0` means no L1: every core access is a demand access of L2 (`l2_demand`) and
prefetches fill L2 only. Both levels are true-LRU (move-to-front within a set), write-back
and write-allocate.
L2 is non-inclusive: an L1 miss looks the line up in L2 (a DRAM read on an L2 miss fills
L2, then L1); a dirty L1 victim is written into L2 (allocated there without a DRAM read,
since the whole line is written); a dirty L2 victim is a DRAM line write.

The stride prefetcher (gem5's StridePrefetcher idea) keeps, per memory op ("PC"), the last
address, the last stride and a confidence counter. A stride seen `threshold` times in a row,
forward or backward, makes every further access of that op prefetch the next `degree`
lines in the stream's direction (or `degree` strides ahead, for strides of a line or more),
without crossing a `page` boundary. A prefetched line is filled into L2 (from DRAM if
needed) and into L1 and marked; the first demand hit on a marked line counts as a useful
prefetch at that level. A line the prefetch brought from DRAM is marked in L1 with the
access count at which it was requested; its first demand hit adds its prefetch distance
d (accesses between request and demand) to a histogram (`PF_DIST`, `late_bin`): the
hardware model turns d into time with the phase's cycles per access and charges the part
of the DRAM latency that d did not cover (a late prefetch).

Addresses are simulated in batches: `CacheSim.access_batch(addrs, pcs, writes)` runs one
compiled loop (numba, when installed) or the same code interpreted by Python over lists
(`backend="python"`), which gives identical counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# Counter slots.
L1_ACC, L1_HIT, L1_MISS, L1_WB, L1_PF, L1_PF_USEFUL, L1_FILL = range(7)
L2_ACC, L2_HIT, L2_MISS, L2_WB, L2_PF, L2_PF_USEFUL, L2_FILL, L2_WB_IN = range(7, 15)
DRAM_RD, DRAM_WR, DRAM_DEMAND_RD, L1_LOADS, L1_STORES, L2_PF_LOOKUP = range(15, 21)
PF_DIST = 21
"""First slot of the prefetch-distance histogram (`PF_BINS` slots, see `late_bin`)."""
PF_BINS = 8 + 4 * 17 + 1
DP_CYCLES = PF_DIST + PF_BINS
"""The datapath rule's cycles so far (hwmodel/timing/datapath.py; 0 without it): not a cache
counter, kept here so that phases take its differences as they take the cache's."""
N_COUNTERS = DP_CYCLES + 1
LEVEL_FIRST, LEVEL_L2, LEVEL_DRAM = range(3)
"""Where an access was found (`kernel`'s `lv`): the first level, L2 after an L1 miss, DRAM."""


def late_bin(d: int) -> int:
    """Histogram bin of a prefetch distance d >= 1 (accesses): exact below 8, then four
    bins per power of two up to 2^20; the last bin holds d >= 2^20 (always in time)."""
    if d < 8:
        return d
    k = 0
    x = d
    while x > 1:
        x >>= 1
        k += 1
    if k > 19:
        return PF_BINS - 1
    return 8 + 4 * (k - 3) + ((d >> (k - 2)) & 3)


def bin_distance(b: int) -> float:
    """The smallest distance in bin `b` (`late_bin`); infinite for the last bin."""
    if b < 8:
        return float(b)
    if b == PF_BINS - 1:
        return math.inf
    k, sub = 3 + (b - 8) // 4, (b - 8) % 4
    return float((4 + sub) << (k - 2))


# The simulation loop. Plain Python here; `_numba_kernel()` compiles copies of these
# functions with numba, so both backends run the same code.

def to_front(tags: Any, dirty: Any, pf: Any, base: int, way: int) -> None:
    t = tags[base + way]
    d = dirty[base + way]
    p = pf[base + way]
    i = way
    while i > 0:
        tags[base + i] = tags[base + i - 1]
        dirty[base + i] = dirty[base + i - 1]
        pf[base + i] = pf[base + i - 1]
        i -= 1
    tags[base] = t
    dirty[base] = d
    pf[base] = p


def find(tags: Any, base: int, assoc: int, line: int) -> int:
    for w in range(assoc):
        if tags[base + w] == line:
            return w
    return -1


def insert(tags: Any, dirty: Any, pf: Any, base: int, assoc: int, line: int,
           d: int, p: int) -> int:  # fmt: skip
    """Inserts `line` at MRU; returns the evicted dirty line, or -1."""
    last = base + assoc - 1
    victim = -1
    if tags[last] >= 0 and dirty[last] != 0:
        victim = tags[last]
    i = assoc - 1
    while i > 0:
        tags[base + i] = tags[base + i - 1]
        dirty[base + i] = dirty[base + i - 1]
        pf[base + i] = pf[base + i - 1]
        i -= 1
    tags[base] = line
    dirty[base] = d
    pf[base] = p
    return victim


def l2_writeback(t2: Any, d2: Any, p2: Any, sets2: int, assoc2: int, line: int,
                 c: Any) -> None:  # fmt: skip
    c[L2_WB_IN] += 1
    base = (line & (sets2 - 1)) * assoc2
    w = find(t2, base, assoc2, line)
    if w >= 0:
        d2[base + w] = 1
        to_front(t2, d2, p2, base, w)
    else:
        victim = insert(t2, d2, p2, base, assoc2, line, 1, 0)
        if victim >= 0:
            c[L2_WB] += 1
            c[DRAM_WR] += 1


def l2_read(t2: Any, d2: Any, p2: Any, sets2: int, assoc2: int, line: int,
            demand: int, c: Any) -> int:  # fmt: skip
    """A line requested by L1 (demand miss or prefetch); returns 1 when DRAM supplied it."""
    base = (line & (sets2 - 1)) * assoc2
    w = find(t2, base, assoc2, line)
    if demand != 0:
        c[L2_ACC] += 1
    else:
        c[L2_PF_LOOKUP] += 1
    if w >= 0:
        if demand != 0:
            c[L2_HIT] += 1
            if p2[base + w] != 0:
                c[L2_PF_USEFUL] += 1
                p2[base + w] = 0
        to_front(t2, d2, p2, base, w)
        return 0
    c[DRAM_RD] += 1
    c[L2_FILL] += 1
    if demand != 0:
        c[L2_MISS] += 1
        c[DRAM_DEMAND_RD] += 1
        p = 0
    else:
        c[L2_PF] += 1
        p = 1
    victim = insert(t2, d2, p2, base, assoc2, line, 0, p)
    if victim >= 0:
        c[L2_WB] += 1
        c[DRAM_WR] += 1
    return 1


def l2_demand(t2: Any, d2: Any, p2: Any, sets2: int, assoc2: int, line: int, wr: int,
              c: Any) -> int:  # fmt: skip
    """A core access when there is no L1 (`sets1 == 0`): a demand access of L2 itself; a
    store dirties the line, a miss reads it from DRAM (write-allocate). Returns 1 on a miss."""
    base = (line & (sets2 - 1)) * assoc2
    w = find(t2, base, assoc2, line)
    c[L2_ACC] += 1
    if w >= 0:
        c[L2_HIT] += 1
        if p2[base + w] != 0:
            c[L2_PF_USEFUL] += 1
            p2[base + w] = 0
        if wr != 0:
            d2[base + w] = 1
        if w > 0:
            to_front(t2, d2, p2, base, w)
        return 0
    c[L2_MISS] += 1
    c[DRAM_RD] += 1
    c[DRAM_DEMAND_RD] += 1
    c[L2_FILL] += 1
    victim = insert(t2, d2, p2, base, assoc2, line, wr, 0)
    if victim >= 0:
        c[L2_WB] += 1
        c[DRAM_WR] += 1
    return 1


def fill_l1(t1: Any, d1: Any, p1: Any, sets1: int, assoc1: int, t2: Any, d2: Any,
            p2: Any, sets2: int, assoc2: int, line: int, d: int, p: int,
            c: Any) -> None:  # fmt: skip
    base = (line & (sets1 - 1)) * assoc1
    victim = insert(t1, d1, p1, base, assoc1, line, d, p)
    c[L1_FILL] += 1
    if victim >= 0:
        c[L1_WB] += 1
        l2_writeback(t2, d2, p2, sets2, assoc2, victim, c)


def kernel(addrs: Any, pcs: Any, writes: Any, n: int, t1: Any, d1: Any, p1: Any,
           sets1: int, assoc1: int, t2: Any, d2: Any, p2: Any, sets2: int, assoc2: int,
           shift: int, pf_on: int, pf_pc: Any, pf_last: Any, pf_stride: Any,
           pf_conf: Any, pf_key: Any, pf_step: Any, pf_fills: Any, table: int, degree: int,
           threshold: int, page_shift: int, c: Any, lv: Any, lv0: int) -> None:  # fmt: skip
    """Simulates `addrs[:n]`; `lv[lv0 + k]` gets where access k was found (`LEVEL_FIRST`...)."""
    line_bytes = 1 << shift
    table_mask = table - 1 if table & (table - 1) == 0 else -1
    acc = c[L1_ACC]  # the hottest counters in locals, stored back at the end
    hits = 0
    stores = 0
    for k in range(n):
        addr = addrs[k]
        pc = pcs[k]
        wr = writes[k]
        line = addr >> shift
        acc += 1
        if wr != 0:
            stores += 1
        if sets1 == 0:  # no L1
            miss = l2_demand(t2, d2, p2, sets2, assoc2, line, wr, c)
            lv[lv0 + k] = LEVEL_DRAM if miss != 0 else LEVEL_FIRST
            w = -2
        else:
            base = (line & (sets1 - 1)) * assoc1
            w = find(t1, base, assoc1, line)
        if w == -2:
            pass
        elif w >= 0:
            hits += 1
            lv[lv0 + k] = LEVEL_FIRST
            if p1[base + w] != 0:
                c[L1_PF_USEFUL] += 1
                if p1[base + w] > 0:  # came from DRAM: how far ahead was it requested?
                    c[PF_DIST + late_bin(acc - p1[base + w])] += 1
                p1[base + w] = 0
            if wr != 0:
                d1[base + w] = 1
            if w > 0:
                to_front(t1, d1, p1, base, w)
        else:
            c[L1_MISS] += 1
            dram = l2_read(t2, d2, p2, sets2, assoc2, line, 1, c)
            lv[lv0 + k] = LEVEL_DRAM if dram != 0 else LEVEL_L2
            fill_l1(t1, d1, p1, sets1, assoc1, t2, d2, p2, sets2, assoc2, line,
                    wr, 0, c)  # fmt: skip
        if pf_on == 0:
            continue
        e = pc & table_mask if table_mask >= 0 else pc % table
        if pf_pc[e] != pc:
            pf_pc[e] = pc
            pf_last[e] = addr
            pf_stride[e] = 0
            pf_conf[e] = 0
            continue
        delta = addr - pf_last[e]
        if delta == 0:
            continue
        pf_last[e] = addr
        if delta == pf_stride[e]:
            if pf_conf[e] < threshold:
                pf_conf[e] += 1
        else:
            pf_stride[e] = delta
            pf_conf[e] = 0
            continue
        if pf_conf[e] < threshold:
            continue
        step = delta
        if delta > 0 and delta < line_bytes:
            step = line_bytes
        elif delta < 0 and -delta < line_bytes:
            step = -line_bytes
        # The targets' lookups change no state: when the last ones of this entry had the
        # same targets and found them all in L1, and L1 has not been filled since (a line
        # leaves L1 only when another is filled), they would find them all again.
        key = addr
        if step == line_bytes or step == -line_bytes:
            key = addr - (addr & (line_bytes - 1))  # the same lines from anywhere in it
        fills = c[L1_FILL] if sets1 != 0 else c[L2_FILL]
        if pf_fills[e] == fills and pf_key[e] == key and pf_step[e] == step:
            continue
        pf_key[e] = key
        pf_step[e] = step
        pf_fills[e] = fills  # matches again only if this loop fills nothing
        page = addr >> page_shift
        for j in range(1, degree + 1):
            target = addr + j * step
            if target < 0 or (target >> page_shift) != page:
                break
            tline = target >> shift
            if sets1 == 0:  # no L1: prefetch into L2 only (a lookup that hits changes nothing)
                tbase = (tline & (sets2 - 1)) * assoc2
                if find(t2, tbase, assoc2, tline) < 0:
                    l2_read(t2, d2, p2, sets2, assoc2, tline, 0, c)
                continue
            tbase = (tline & (sets1 - 1)) * assoc1
            if find(t1, tbase, assoc1, tline) >= 0:
                continue
            c[L1_PF] += 1
            stamp = -1  # from L2: no DRAM latency to hide
            if l2_read(t2, d2, p2, sets2, assoc2, tline, 0, c) != 0:
                stamp = acc
            fill_l1(t1, d1, p1, sets1, assoc1, t2, d2, p2, sets2, assoc2, tline,
                    0, stamp, c)  # fmt: skip
    c[L1_ACC] = acc
    c[L1_HIT] += hits
    c[L1_STORES] += stores
    c[L1_LOADS] += n - stores


def kernel_cuts(addrs: Any, pcs: Any, writes: Any, n: int, cuts: Any, snaps: Any, t1: Any,
                d1: Any, p1: Any, sets1: int, assoc1: int, t2: Any, d2: Any, p2: Any,
                sets2: int, assoc2: int, shift: int, pf_on: int, pf_pc: Any, pf_last: Any,
                pf_stride: Any, pf_conf: Any, pf_key: Any, pf_step: Any, pf_fills: Any,
                table: int, degree: int, threshold: int, page_shift: int,
                c: Any, lv: Any) -> None:  # fmt: skip
    """`kernel` over `addrs[:n]`, copying the counters into `snaps[i]` once the first
    `cuts[i]` accesses are done (cuts ascending, each in 0..n)."""
    start = 0
    for i in range(len(cuts)):
        end = cuts[i]
        if end > start:
            kernel(addrs[start:end], pcs[start:end], writes[start:end], end - start, t1, d1,
                   p1, sets1, assoc1, t2, d2, p2, sets2, assoc2, shift, pf_on, pf_pc,
                   pf_last, pf_stride, pf_conf, pf_key, pf_step, pf_fills, table, degree,
                   threshold, page_shift, c, lv, start)  # fmt: skip
            start = end
        row = snaps[i]
        for j in range(len(c)):
            row[j] = c[j]
    if n > start:
        kernel(addrs[start:n], pcs[start:n], writes[start:n], n - start, t1, d1, p1, sets1,
               assoc1, t2, d2, p2, sets2, assoc2, shift, pf_on, pf_pc, pf_last, pf_stride,
               pf_conf, pf_key, pf_step, pf_fills, table, degree, threshold, page_shift,
               c, lv, start)  # fmt: skip


_PY_KERNEL = kernel
_PY_KERNEL_CUTS = kernel_cuts
_NUMBA_KERNEL: Any = None
_NUMBA_KERNEL_CUTS: Any = None
_KERNEL_FUNCS = (to_front, find, insert, l2_writeback, l2_read, l2_demand, fill_l1, late_bin,
                 kernel, kernel_cuts)  # fmt: skip


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def numba_copies(funcs: Any, namespace: dict[str, Any]) -> dict[str, Any]:
    """`namespace` with numba-compiled copies of `funcs` (plain Python functions written
    for both backends): each copy's globals name the compiled copies, so compiled code
    calls compiled helpers; `cache=True` keeps the machine code on disk (__pycache__)
    across processes."""
    import types

    import numba

    names = dict(namespace)
    for f in funcs:
        copy = types.FunctionType(f.__code__, names, f.__name__)
        names[f.__name__] = numba.njit(cache=True)(copy)
    return names


def _numba_kernel() -> Any:
    global _NUMBA_KERNEL, _NUMBA_KERNEL_CUTS
    if _NUMBA_KERNEL is None:
        names = numba_copies(_KERNEL_FUNCS, globals())
        _NUMBA_KERNEL = names["kernel"]
        _NUMBA_KERNEL_CUTS = names["kernel_cuts"]
    return _NUMBA_KERNEL


def decode_accesses(packed: Any, start: int, bases: Any, pc_table: Any, layout: Any,
                    addrs: Any, pcs: Any, writes: Any) -> int:  # fmt: skip
    """Decodes the compiled path's packed accesses (`hwmodel.compiled.module.Trace.flush`;
    `layout` = buffer shift, offset shift, offset mask, PC-slot shift, PC-slot mask) from
    `start` on into (address, PC, 0/1 for store), one pass; stops at the first access to
    a buffer without a base yet (`bases` < 0) and returns its position (-1: all done)."""
    buf_shift, off_shift, off_mask, sid_shift, sid_mask = (layout[0], layout[1], layout[2],
                                                           layout[3], layout[4])  # fmt: skip
    for k in range(start, len(packed)):
        x = packed[k]
        base = bases[x >> buf_shift]
        if base < 0:
            return k
        addrs[k] = base + ((x >> off_shift) & off_mask)
        pcs[k] = pc_table[(x >> sid_shift) & sid_mask]
        writes[k] = x & 1
    return -1


_NUMBA_DECODE: Any = None


def numba_decoder() -> Any:
    """`decode_accesses` compiled by numba, or None when numba is not installed (the
    compiled path then decodes with NumPy)."""
    global _NUMBA_DECODE
    if _NUMBA_DECODE is None and numba_available():
        _NUMBA_DECODE = numba_copies((decode_accesses,), globals())["decode_accesses"]
    return _NUMBA_DECODE


@dataclass(frozen=True)
class CacheParams:
    l1_size: int = 32768
    l1_assoc: int = 8
    l2_size: int = 1048576
    l2_assoc: int = 16
    line: int = 64
    prefetch: bool = True
    table: int = 64
    degree: int = 4
    threshold: int = 2
    page: int = 4096

    @classmethod
    def from_machine(cls, machine: Any, prefetch: bool | None = None) -> CacheParams:
        pf = machine.raw["prefetch"]
        return cls(
            l1_size=machine.l1.size,
            l1_assoc=machine.l1.assoc,
            l2_size=machine.l2.size,
            l2_assoc=machine.l2.assoc,
            line=machine.l1.line,
            prefetch=pf["enabled"] if prefetch is None else prefetch,
            table=pf["table_size"],
            degree=pf["degree"],
            threshold=pf["threshold"],
            page=pf["page"],
        )


class CacheSim:
    """The state of both levels and the prefetcher; counters accumulate across batches."""

    def __init__(self, params: CacheParams = CacheParams(), backend: str = "auto"):
        if backend == "auto":
            backend = "numba" if numba_available() else "python"
        if backend not in ("numba", "python"):
            raise ValueError(f"unknown cache backend '{backend}' (numba, python)")
        if backend == "numba" and not numba_available():
            raise ValueError("cache backend 'numba' requested but numba is not installed")
        self.backend = backend
        self.params = params
        p = params
        self.sets1 = p.l1_size // (p.l1_assoc * p.line)
        self.sets2 = p.l2_size // (p.l2_assoc * p.line)
        self.shift = p.line.bit_length() - 1
        self.page_shift = p.page.bit_length() - 1
        n1, n2 = self.sets1 * p.l1_assoc, self.sets2 * p.l2_assoc
        if backend == "numba":
            self._kernel = _numba_kernel()
            self._kernel_cuts = _NUMBA_KERNEL_CUTS

            def arr(n: int, v: int) -> Any:
                return np.full(n, v, dtype=np.int64)
        else:
            self._kernel = _PY_KERNEL
            self._kernel_cuts = _PY_KERNEL_CUTS

            def arr(n: int, v: int) -> Any:
                return [v] * n

        self._state = (arr(n1, -1), arr(n1, 0), arr(n1, 0), arr(n2, -1), arr(n2, 0),
                       arr(n2, 0))  # fmt: skip
        t = p.table
        # Per entry: PC, last address, stride, confidence; the last target lookups' key,
        # step and L1 fill count (-1: none).
        self._pf = (arr(t, -1), arr(t, 0), arr(t, 0), arr(t, 0), arr(t, 0), arr(t, 0),
                    arr(t, -1))  # fmt: skip
        self._c = arr(N_COUNTERS, 0)
        self.datapath: Any = None
        """The datapath rule (`hwmodel.timing.datapath.Datapath`) that times each batch's block
        instances from the levels its accesses were found at; None without it."""

    def access_batch(self, addrs: Any, pcs: Any, writes: Any) -> None:
        """Simulates `len(addrs)` accesses (byte addresses, op ids, 0/1 for store)."""
        n = len(addrs)
        if n == 0:
            return
        if self.backend == "numba":
            addrs = np.asarray(addrs, dtype=np.int64)
            pcs = np.asarray(pcs, dtype=np.int64)
            writes = np.asarray(writes, dtype=np.int64)
            lv: Any = np.empty(n, dtype=np.int64)
        else:
            addrs = [int(a) for a in addrs]
            pcs = [int(a) for a in pcs]
            writes = [int(a) for a in writes]
            lv = [0] * n
        if (int(addrs.min()) if self.backend == "numba" else min(addrs)) < 0:
            raise ValueError("negative address in the cache simulator")
        t1, d1, p1, t2, d2, p2 = self._state
        p = self.params
        self._kernel(addrs, pcs, writes, n, t1, d1, p1, self.sets1, p.l1_assoc, t2, d2,
                     p2, self.sets2, p.l2_assoc, self.shift, 1 if p.prefetch else 0,
                     *self._pf, p.table, p.degree, p.threshold, self.page_shift,
                     self._c, lv, 0)  # fmt: skip
        if self.datapath is not None:
            self.datapath.consume(pcs, lv, self._c)

    def access_batch_cuts(self, addrs: Any, pcs: Any, writes: Any, cuts: Any) -> Any:
        """`access_batch`, returning a copy of the counter slots (`raw_counters`) taken
        after each of the first `cuts[i]` accesses (ascending offsets in 0..len(addrs)):
        the fast path's phase ends inside a batch, in one call. One row per cut (an int64
        array with the numba backend, lists of ints with the python one)."""
        n = len(addrs)
        if self.backend == "numba":
            addrs = np.asarray(addrs, dtype=np.int64)
            pcs = np.asarray(pcs, dtype=np.int64)
            writes = np.asarray(writes, dtype=np.int64)
            cuts_a = np.asarray(cuts, dtype=np.int64)
            snaps: Any = np.zeros((len(cuts), N_COUNTERS), dtype=np.int64)
            lv: Any = np.empty(n, dtype=np.int64)
        else:
            addrs = [int(a) for a in addrs]
            pcs = [int(a) for a in pcs]
            writes = [int(a) for a in writes]
            cuts_a = [int(a) for a in cuts]
            snaps = [[0] * N_COUNTERS for _ in cuts_a]
            lv = [0] * n
        if n and (int(addrs.min()) if self.backend == "numba" else min(addrs)) < 0:
            raise ValueError("negative address in the cache simulator")
        t1, d1, p1, t2, d2, p2 = self._state
        p = self.params
        self._kernel_cuts(addrs, pcs, writes, n, cuts_a, snaps, t1, d1, p1, self.sets1,
                          p.l1_assoc, t2, d2, p2, self.sets2, p.l2_assoc, self.shift,
                          1 if p.prefetch else 0, *self._pf, p.table, p.degree, p.threshold,
                          self.page_shift, self._c, lv)  # fmt: skip
        if self.datapath is not None:
            self.datapath.consume(pcs, lv, self._c, cuts_a, snaps)
        return snaps

    @property
    def counters(self) -> dict[str, int]:
        return counters_dict(self._c)

    def raw_counters(self) -> list[int]:
        """A copy of the counter slots (indexed by L1_ACC...), as Python ints."""
        c = self._c
        return list(c) if isinstance(c, list) else c.tolist()

    def dirty_lines(self) -> tuple[int, int]:
        """Dirty lines still held in (L1, L2): data not yet written back to DRAM."""
        t1, d1, _, t2, d2, _ = self._state
        l1 = sum(1 for t, d in zip(t1, d1) if t >= 0 and d)
        l2 = sum(1 for t, d in zip(t2, d2) if t >= 0 and d)
        return l1, l2


def counters_dict(counters: Any) -> dict[str, int]:
    """The named counters (`CacheSim.counters`) of a raw counter array (a copy of its
    state at some point: the fast path snapshots it at phase ends)."""
    c = [int(x) for x in counters]
    return {
        "l1_accesses": c[L1_ACC],
        "l1_loads": c[L1_LOADS],
        "l1_stores": c[L1_STORES],
        "l1_hits": c[L1_HIT],
        "l1_misses": c[L1_MISS],
        "l1_writebacks": c[L1_WB],
        "l1_fills": c[L1_FILL],
        "l1_prefetches": c[L1_PF],
        "l1_prefetches_useful": c[L1_PF_USEFUL],
        "l2_accesses": c[L2_ACC],
        "l2_hits": c[L2_HIT],
        "l2_misses": c[L2_MISS],
        "l2_writebacks": c[L2_WB],
        "l2_fills": c[L2_FILL],
        "l2_writebacks_in": c[L2_WB_IN],
        "l2_prefetch_lookups": c[L2_PF_LOOKUP],
        "l2_prefetches": c[L2_PF],
        "l2_prefetches_useful": c[L2_PF_USEFUL],
        "dram_lines_read": c[DRAM_RD],
        "dram_lines_written": c[DRAM_WR],
        "dram_demand_lines_read": c[DRAM_DEMAND_RD],
    }
