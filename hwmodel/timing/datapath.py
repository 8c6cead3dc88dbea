"""The dependence-level datapath rule of lockstep accelerators (`datapath.enabled`).

gem5-SALAM's datapath (src/hwacc/llvm_interface.cc: `scheduleBB`, `findDynamicDeps`,
`processQueues`) puts a whole basic block into a reservation queue; each tick launches
every ready instruction; under `lockstep_mode` nothing new launches until everything in
flight is done. So a block instance is a sequence of *steps*: a step launches every op
whose inputs are done (zero-latency ops complete at once, so their users join the same
step) and costs the longest latency launched in it. Functional units are unlimited; memory
requests in flight are limited to `datapath.ports * datapath.in_flight` (the ready ones
beyond it wait for a later step, in program order); every load depends on all earlier
stores of its block; a loop's iterations never overlap (the latch waits for an empty
queue), so each instance is scheduled alone.

Here a *static block* is a straight-line piece of an MLIR block, cut after every op with
regions and every `func.call` (an LLVM basic block ends there). Its dependence graph is
built once (`BlockGraph`): SSA uses within the block, loads after earlier stores. Each op
takes its class's `ops.<class>.latency` (the semantics table's class, `classify`), a
scratchpad access `spm.latency`, a cache access the latency of the level the cache
simulator found it at (`Datapath.by_level`: a first-level hit, an L2 hit after an L1 miss,
DRAM: each adds its level's latency to the previous one's). A loop
iteration's end (`scf.yield` of an scf.for/affine.for) is its latch, an add and a compare
(two `int` latencies), which depend on nothing of the body.

One rule for both paths: a block whose graph has no cache access costs the same every
time (`Datapath.static_charge`, charged on its first op: the listener per execution, the
fast path per segment count); a block with cache accesses is timed from the access stream
(`Datapath.consume`, called by `CacheSim` with the level of every access it simulated):
the accesses of one instance arrive in order, each op's PC names its graph and slot, and
the instance is scheduled (`schedule`, numba-compiled with the cache) when its last
access arrives. The cycles so far sit in the cache counters' `DP_CYCLES` slot, which the
phases take their differences of (`tapeflow.hwmodel.timing.phases.close_phases`).

Simplifications: blocks do not overlap each other; every instance costs at least one
step; memref.copy's element accesses cost their latencies one after another (and later
loads do not wait for it); latencies are rounded to whole steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tapeflow.hwmodel.cache import DP_CYCLES, N_COUNTERS, numba_copies
from tapeflow.hwmodel.costs import classify, is_ideal_tape, is_loop_end, memory_charges
from tapeflow.semantics.memory import PC_MASK
from xdsl.ir import Block, Operation
from xdsl.traits import IsTerminator

LOOP_LATCH_OPS = ("scf.for", "affine.for")
"""Loops whose iteration end is a latch of an add and a compare (scf.while's condition is
explicit ops of its before region)."""


def block_pieces(block: Block) -> list[list[Operation]]:
    """The static blocks of `block`: its ops cut after every op with regions and every call."""
    pieces: list[list[Operation]] = []
    cur: list[Operation] = []
    for op in block.ops:
        cur.append(op)
        if op.regions or op.name == "func.call":
            pieces.append(cur)
            cur = []
    if cur:
        pieces.append(cur)
    return pieces


@dataclass
class BlockGraph:
    """A static block's dependence graph, nodes in program order (deps point backwards).

    `lat[v]` >= 0: a fixed latency; -1: the latency of cache access slot `slot[v]` of the
    instance. `mem[v]`: a memory request (counts against the in-flight limit)."""

    lat: list[int]
    mem: list[int]
    slot: list[int]
    deps: list[list[int]]
    accesses: dict[Operation, int]  # op -> its first slot (its cache accesses in order)

    @property
    def slots(self) -> int:
        return sum(1 for s in self.slot if s >= 0)


def build_graph(ops: list[Operation], op_latency: Any, access_info: Any,
                spm_latency: int) -> BlockGraph:  # fmt: skip
    """The graph of one static block. `op_latency(op)`: the op's fixed latency;
    `access_info(op)`: (cache accesses, scratchpad accesses, reads memory, writes memory)
    of one execution, or None for an op that does not access memory."""
    g = BlockGraph([], [], [], [], {})
    node_of: dict[Operation, int] = {}
    stores: list[int] = []
    nslots = 0
    for op in ops:
        deps = sorted({node_of[o.owner] for o in op.operands
                       if isinstance(o.owner, Operation) and o.owner in node_of})  # fmt: skip
        info = access_info(op)
        if op is ops[-1] and op.has_trait(IsTerminator):
            deps = []  # it passes values on; a loop's latch needs only the induction variable
        if info is None:
            g.lat.append(op_latency(op))
            g.mem.append(0)
            g.slot.append(-1)
            g.deps.append(deps)
            node_of[op] = len(g.lat) - 1
            continue
        cached, spm, reads, writes = info
        if reads:
            deps = sorted({*deps, *stores})  # a load waits for every earlier store
        parts = []
        if cached:
            g.accesses[op] = nslots
        for k in range(cached + spm):
            g.lat.append(-1 if k < cached else spm_latency)
            g.mem.append(1)
            g.slot.append(nslots + k if k < cached else -1)
            g.deps.append(deps)
            parts.append(len(g.lat) - 1)
        nslots += cached
        if len(parts) != 1:  # the op's result: when all its accesses are done
            g.lat.append(0)
            g.mem.append(0)
            g.slot.append(-1)
            g.deps.append(parts or deps)
        node_of[op] = len(g.lat) - 1
        if writes:
            stores.append(node_of[op])
    return g


# The schedule and the stream walk: plain Python for both backends, as the cache kernel
# (numba-compiled copies with the numba backend; the same operations in the same order).


def schedule(v0: int, v1: int, lat: Any, mem: Any, slot: Any, dep_ptr: Any, dep_idx: Any,
             lats: Any, lat_off: int, limit: int, step_of: Any, eff: Any, step_max: Any,
             step_mem: Any) -> int:  # fmt: skip
    """Cycles of one instance of the graph of nodes v0..v1-1 (module docstring): each node
    goes to the first step after its inputs are done (with a zero-latency input, that
    input's step) that has a free request slot if it is a memory request."""
    nsteps = 0
    for v in range(v0, v1):
        d = lat[v]
        if d < 0:
            d = lats[lat_off + slot[v]]
        s = 0
        for e in range(dep_ptr[v], dep_ptr[v + 1]):
            u = dep_idx[e]
            t = step_of[u] + 1 if eff[u] > 0 else step_of[u]
            if t > s:
                s = t
        while True:
            while nsteps <= s:
                step_max[nsteps] = 0
                step_mem[nsteps] = 0
                nsteps += 1
            if mem[v] == 0 or step_mem[s] < limit:
                break
            s += 1
        step_of[v] = s
        eff[v] = d
        if d > step_max[s]:
            step_max[s] = d
        if mem[v] != 0:
            step_mem[s] += 1
    total = 0
    for s in range(nsteps):
        total += step_max[s]
    return total if total > 1 else 1


def consume(pcs: Any, levels: Any, n: int, cuts: Any, ncuts: int, snaps: Any, c: Any,
            pc_graph: Any, pc_slot: Any, g_v0: Any, g_v1: Any, g_off: Any, g_slots: Any,
            g_memo: Any, g_code: Any, memo: Any, lat: Any, mem: Any, slot: Any,
            dep_ptr: Any, dep_idx: Any, lats: Any, by_level: Any, limit: int, step_of: Any,
            eff: Any, step_max: Any, step_mem: Any) -> None:  # fmt: skip
    """Adds the cycles of the block instances whose last cache access is among the `n`
    accesses (PCs, levels) to `c[DP_CYCLES]`; `snaps[i][DP_CYCLES]` gets its value once
    the first `cuts[i]` accesses are done (the cache kernel's phase-end snapshots). An
    instance's cycles depend only on its accesses' levels: a graph of at most
    `MEMO_SLOTS` accesses keeps them per combination of levels (`memo` from `g_memo[g]`,
    the instance's combination so far in `g_code[g]`)."""
    ci = 0
    for i in range(n):
        while ci < ncuts and cuts[ci] <= i:
            snaps[ci][DP_CYCLES] = c[DP_CYCLES]
            ci += 1
        d = by_level[levels[i]]
        pc = pcs[i]
        g = pc_graph[pc]
        if g < 0:  # not one op's access of a block (memref.copy): alone
            c[DP_CYCLES] += d
            continue
        s = pc_slot[pc]
        lats[g_off[g] + s] = d
        mo = g_memo[g]
        if mo >= 0:
            if s == 0:
                g_code[g] = 0
            g_code[g] += levels[i] * 3**s
        if s == g_slots[g] - 1:
            # a combination of levels only when every slot of this instance arrived
            code = g_code[g] if mo >= 0 and g_code[g] < 3 ** g_slots[g] else -1
            v = memo[mo + code] if code >= 0 else -1
            if v < 0:
                v = schedule(g_v0[g], g_v1[g], lat, mem, slot, dep_ptr, dep_idx, lats,
                             g_off[g], limit, step_of, eff, step_max, step_mem)  # fmt: skip
                if code >= 0:
                    memo[mo + code] = v
            if mo >= 0:
                g_code[g] = 0
            c[DP_CYCLES] += v
    while ci < ncuts:
        snaps[ci][DP_CYCLES] = c[DP_CYCLES]
        ci += 1


def static_cycles(g: BlockGraph, limit: int) -> int:
    """`schedule` of one instance of a graph without cache accesses, on its own nodes: its
    cycles are fixed, and the kernels' flat tables (rebuilt whenever a graph is added)
    are not needed for it."""
    n = len(g.lat)
    dep_ptr, dep_idx = [0], []
    for deps in g.deps:
        dep_idx.extend(deps)
        dep_ptr.append(len(dep_idx))
    return schedule(0, n, g.lat, g.mem, g.slot, dep_ptr, dep_idx, [0], 0, limit,
                    [0] * n, [0] * n, [0] * (n + 1), [0] * (n + 1))  # fmt: skip


MEMO_SLOTS = 8
"""Graphs with up to this many cache accesses keep their cycles per combination of levels
(3 ** 8 = 6,561 entries at most)."""

_FUNCS = (schedule, consume)
_NUMBA: dict[str, Any] = {}


def _kernels(backend: str) -> tuple[Any, Any]:
    if backend != "numba":
        return schedule, consume
    if not _NUMBA:
        _NUMBA.update(numba_copies(_FUNCS, globals()))
    return _NUMBA["schedule"], _NUMBA["consume"]


class Datapath:
    """The rule's state for one hardware model: the graphs of the static blocks seen so far
    (flat arrays for the kernels), the PC -> (graph, slot) table, the static charges."""

    def __init__(self, machine: Any, pcs: dict[Operation, int], backend: str) -> None:
        ops = machine.raw["ops"]
        self._lat = {name: int(t.get("latency", 0)) for name, t in ops.items()}
        self._spm_lat = int(round(machine.spm_latency))
        first = machine.get("l1", "latency") if machine.has_l1 else machine.get("l2", "latency")
        l2 = machine.get("l2", "latency") if machine.has_l1 else 0
        dram = machine.get("dram", "latency")
        self.by_level = [int(round(x)) for x in (first, first + l2, first + l2 + dram)]
        dp = machine.raw["datapath"]
        self.limit = int(dp["ports"]) * int(dp["in_flight"])  # requests in flight per step
        self.static_key = (tuple(sorted(self._lat.items())), self._spm_lat, self.limit)
        """What the graphs and `static_charge` depend on: equal keys, equal graphs and
        charges (the machines of an L2 sweep)."""
        self.backend = backend
        self._consume = _kernels(backend)[1]  # static blocks: `static_cycles`
        self._pcs = pcs
        self._seen = 0  # entries of `pcs` already in the PC table
        self._graphs: dict[Operation, tuple[int, BlockGraph]] = {}  # first op -> (index, graph)
        self.built: dict[Operation, BlockGraph] = {}
        """The graphs built, by their first op: one dict for the datapaths of a run whose
        graphs are alike (equal `static_key`; `ModelTrace` shares it)."""
        self._piece_of: dict[Operation, list[Operation]] = {}
        self.static: dict[Operation, int] = {}
        self._flat: dict[str, list[int]] = {k: [] for k in (
            "g_v0", "g_v1", "g_off", "g_slots", "g_memo", "lat", "mem", "slot",
            "dep_idx")}  # fmt: skip
        self._flat["dep_ptr"] = [0]
        self._pc_graph = self._filled(PC_MASK + 1, -1)  # PC -> graph (-1: none)
        self._pc_slot = self._filled(PC_MASK + 1, 0)  # PC -> its access's slot
        self._pc_owner: dict[int, Operation] = {}
        self._arrays: tuple[Any, ...] = ()
        self._kept: dict[str, Any] = {}
        self._no_snaps = self._conv2([[0] * N_COUNTERS])
        self._by_level = self._conv(self.by_level)

    # -- op facts ------------------------------------------------------------------------
    def op_latency(self, op: Operation) -> int:
        if is_ideal_tape(op):  # commits at once (gem5-SALAM's "ad"): no request, no latency
            return 0
        if is_loop_end(op):
            parent = op.parent_op()
            if parent is not None and parent.name in LOOP_LATCH_OPS:
                return 2 * self._lat["int"]  # the latch's add and compare
        return self._lat[classify(op) or "int"]

    def access_info(self, op: Operation) -> tuple[int, int, bool, bool] | None:
        if op.name == "memref.copy":  # its accesses go alone (`consume`)
            return None
        if is_ideal_tape(op):  # a free tape access reaches no cache: it has no slot
            return None
        ch = memory_charges(op)
        if ch is None:
            return None
        loads, stores, spm, _ = ch
        n = loads + stores
        return (0, n, loads > 0, stores > 0) if spm else (n, 0, loads > 0, stores > 0)

    # -- graphs ----------------------------------------------------------------------------
    def piece_of(self, op: Operation) -> list[Operation] | None:
        piece = self._piece_of.get(op)
        if piece is None:
            block = op.parent_block()
            parent = block.parent_op() if block is not None else None
            if block is None or parent is None or parent.name == "builtin.module":
                return None
            for p in block_pieces(block):
                for o in p:
                    self._piece_of[o] = p
            piece = self._piece_of[op]
        return piece

    def graph_of(self, piece: list[Operation]) -> tuple[int, BlockGraph]:
        entry = self._graphs.get(piece[0])
        if entry is not None:
            return entry
        g = self.built.get(piece[0])
        if g is None:
            g = build_graph(piece, self.op_latency, self.access_info, self._spm_lat)
            self.built[piece[0]] = g
        f = self._flat
        index = len(f["g_v0"])
        v0 = len(f["lat"])
        f["g_v0"].append(v0)
        f["g_v1"].append(v0 + len(g.lat))
        f["g_off"].append(sum(f["g_slots"]))
        f["g_slots"].append(g.slots)
        memo = sum(3**k for k, m in zip(f["g_slots"][:-1], f["g_memo"]) if m >= 0)
        f["g_memo"].append(memo if g.slots <= MEMO_SLOTS else -1)
        f["lat"].extend(g.lat)
        f["mem"].extend(g.mem)
        f["slot"].extend(g.slot)
        for deps in g.deps:
            f["dep_idx"].extend(v0 + u for u in deps)
            f["dep_ptr"].append(len(f["dep_idx"]))
        self._graphs[piece[0]] = entry = (index, g)
        self._arrays = ()
        return entry

    def static_charge(self, op: Operation) -> int:
        """Cycles charged when `op` runs: a static block's whole cost on its first op when
        the block has no cache access (its cost is the same every time), else 0."""
        charge = self.static.get(op)
        if charge is None:
            piece = self.piece_of(op)
            charge = 0
            if piece is not None and piece[0] is op:
                _, g = self.graph_of(piece)
                if g.slots == 0:
                    charge = static_cycles(g, self.limit)
            self.static[op] = charge
        return charge

    def _conv2(self, rows: list[list[int]]) -> Any:
        return np.asarray(rows, dtype=np.int64) if self.backend == "numba" else rows

    def _filled(self, n: int, value: int) -> Any:
        """`_conv([value] * n)`, without building the list for numba (the PC tables are
        65,536 entries, one pair per hardware model)."""
        return np.full(n, value, dtype=np.int64) if self.backend == "numba" else [value] * n

    def _conv(self, values: list[int]) -> Any:
        return np.asarray(values, dtype=np.int64) if self.backend == "numba" else list(values)

    def _tables(self) -> tuple[Any, ...]:
        """The kernels' arrays, rebuilt when a graph was added: the graphs (`g_*`, then
        the nodes), the state kept across batches (`g_code`, `memo`, `lats`: grown, never
        reset) and scratch arrays."""
        if not self._arrays:
            f = self._flat
            kept = self._kept

            def grown(name: str, size: int, fill: int) -> Any:
                old = list(kept.get(name, []))
                kept[name] = self._conv(old + [fill] * (max(1, size) - len(old)))
                return kept[name]

            memo_size = sum(3**k for k, m in zip(f["g_slots"], f["g_memo"]) if m >= 0)
            n = max(1, len(f["lat"]))
            big = max([v1 - v0 for v0, v1 in zip(f["g_v0"], f["g_v1"])] or [0]) + 1
            self._arrays = (
                *(self._conv(f[k] or [0]) for k in ("g_v0", "g_v1", "g_off", "g_slots",
                                                    "g_memo")),
                grown("g_code", len(f["g_v0"]), 0), grown("memo", memo_size, -1),
                *(self._conv(f[k] or [0]) for k in ("lat", "mem", "slot", "dep_ptr", "dep_idx")),
                grown("lats", sum(f["g_slots"]), 0),
                self._conv([0] * n), self._conv([0] * n),  # step_of, eff
                self._conv([0] * big), self._conv([0] * big),  # step_max, step_mem
            )  # fmt: skip
        return self._arrays

    def _update_pcs(self) -> None:
        """Adds the ops that got a PC since the last batch to the PC table."""
        if len(self._pcs) == self._seen:
            return
        items = list(self._pcs.items())[self._seen :]
        self._seen = len(self._pcs)
        pg, ps = self._pc_graph, self._pc_slot
        for op, pc in items:
            piece = self.piece_of(op)
            if piece is None:
                continue
            index, g = self.graph_of(piece)
            first = g.accesses.get(op)
            info = self.access_info(op)
            n = info[0] if info is not None else 0
            for k in range(n if first is not None else 0):
                p = (pc + k) & PC_MASK
                owner = self._pc_owner.setdefault(p, op)
                # a PC two ops share (the 16-bit PC wrapped): their accesses go alone
                ok = owner is op
                pg[p], ps[p] = (index, first + k) if ok else (-1, 0)  # type: ignore[operator]

    def consume(self, pcs: Any, levels: Any, c: Any, cuts: Any = (), snaps: Any = None) -> None:
        """Times the block instances completed by a batch the cache just simulated (its PCs
        and the level of each access); `cuts`/`snaps` as `CacheSim.access_batch_cuts`."""
        self._update_pcs()
        a = self._tables()
        pg, ps = self._pc_graph, self._pc_slot
        self._consume(pcs, levels, len(pcs), self._conv(list(cuts) or [0]), len(cuts),
                      snaps if snaps is not None else self._no_snaps, c, pg, ps, *a[:13],
                      self._by_level, self.limit, *a[13:])  # fmt: skip
