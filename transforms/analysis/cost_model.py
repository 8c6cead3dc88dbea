"""The static cost model of `tapeflow{mode=auto}`: does streaming a region's tape pay?

The pipeline asks it once per *region loop* (a group of caches `tapeflow-regions` would
pack into one record tape, docs/CONTRACTS.md), before any region is formed, with the
autodiff IR and the machine description: `MachineCosts`, the keys of the machine the
pipeline's caller loaded (`tapeflow.machines.machine_costs`; `machine=NAME` on the command
line: a preset or a machine TOML). It never looks at a simulation of the
program being compiled: only at the IR (record bytes, trip counts) and at machine keys.
docs/CONTRACTS.md ("The cost model of mode=auto") states the rule; in short, per region
with tape `T` bytes (records x record bytes, from the trip counts) in a function whose
caches hold `T_f` bytes in all:

- `T_f <= l1.size / 2` (the *L1 share*: half the L1 for the tape, half for the data the
  program reads): Enzyme's layout hits in L1 and nothing can be gained -> Enzyme layout.
- Otherwise compare, in cycles,
  `E` = Enzyme layout's exposed tape misses: `2 * lines * latency / core.mlp`, where the
  latency is `l2.latency` when `T_f <= l2.size / 2`, else `dram.latency`, and `lines`
  = `T / line` (`l1.line`), or, when `prefetch.enabled` and the table has room for the
  push and pop sites (`2 x caches <= prefetch.table_size`), `T / prefetch.page` (a
  trained stride stream misses once per page, since prefetches do not cross pages);
  `F` = streaming's added cycles: per tile, 2 DMA descriptors (`2 * ops.dma.cycles /
  core.issue_width`) and 4 DMA fences (acquire, commit, prefetch, acquire), each cutting
  the core's overlap window (`core.window_ops / core.issue_width / 2` cycles: half a
  window lost per fence); once, the fill of the reverse sweep and the drain of the
  forward one (`2 * (dma.setup + dram.latency + tile / BW_dma)`, `BW_dma =
  Machine.dma_bandwidth`: min(dram.bandwidth, dma.spm_port, l2.bandwidth on the L2 path)). Tiles are `spm.size / (depth x the function's record bytes)` records.
  On a lockstep core (nothing launched while an access is in flight), `E` also counts
  the pushes' and pops' latency beyond the scratchpad's, even when the tape fits the L1
  share, by the machine's timing rule (`lockstep_hits`): the datapath rule
  (`datapath.enabled`, hwmodel/timing/datapath.py) launches a record's `caches` pushes
  (pops) together, as independent requests of one block instance, `datapath.ports x
  datapath.in_flight` per step, so `2 x records x ceil(caches / that) x (latency of the
  first cache level - spm latency)`; the phase rule's lockstep (hwmodel/timing/phases.py)
  (`core.lockstep` alone) pays every access, `2 x records x caches x (that latency
  difference) / core.lockstep_mlp`. Stream when `E > F`, else keep Enzyme's layout.
- A ragged nest (inner trip counts varying with the outer iteration, a triangular solve's):
  its records are counted at compile time when every bound is a constant given the outer
  induction variables (`ragged.iterations`), and decided on as any nest of that many
  records; otherwise as a trip count unknown at compile time.
- A trip count unknown at compile time: `T` is taken as unbounded, so the decision is
  the one for a large tape: the per-tile rates `E(tile)` against `F` (without the fill).
  Where streaming does not pay, the caches keep Enzyme's layout when it indexes them
  (`tapeflow-lower-tape` rule 3 with rule 1's shape: arrays sized at the nest's entry,
  indexed by the loop counters, as the twin with constant sizes is); otherwise they are
  packed into a DRAM record tape ("regions only"): Enzyme's layout is then a stack (a
  stack pointer loaded and stored at every push and pop), while records are indexed by
  the iteration numbers.
- The `native` machine (`tapeflow-exec -p`, `benchmarks/native_time.py`): Enzyme's layout
  for every region loop, run-time trip counts included. An assumption, not a model: the
  host CPU has no DMA engine, so staging is copies the core does itself, and regions only
  measured no gain over Enzyme's layout natively (docs/CONTRACTS.md, rule 4).

Regions without streaming are not chosen for constant trip counts: with the misses
counted per line or per page, one record stream touches the lines (pages) the caches'
arrays touch together, so the rule finds nothing it gains. A refused region keeps the Enzyme layout exactly (the
pipeline lowers its caches with `tapeflow-lower-tape`, as the baseline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import func, scf

from tapeflow.dialects import region, tape
from tapeflow.transforms.analysis.constants import trip_count
from tapeflow.transforms.ragged import iterations, ragged_split

KEPT = "kept in Enzyme's layout, layers skipped"
FENCES_PER_TILE = 4
"""DMA fences per tile: acquire_write and commit (forward), prefetch and acquire_read
(reverse); `stream.release` is not one (hwmodel/timing/phases.py, module docstring)."""


@dataclass(frozen=True)
class MachineCosts:
    """The machine keys the rule reads (each named by its TOML key)."""

    name: str
    l1_bytes: int  # l1.size
    l2_bytes: int  # l2.size
    line: int  # l1.line
    l2_latency: float  # l2.latency
    dram_latency: float  # dram.latency
    mlp: float  # core.mlp
    prefetch: bool  # prefetch.enabled
    page: int  # prefetch.page
    table: int  # prefetch.table_size
    issue_width: int  # core.issue_width
    window_ops: int  # core.window_ops
    dma_issue: float  # ops.dma.cycles
    dma_setup: float  # dma.setup
    dma_bandwidth: float  # min(dram.bandwidth, dma.spm_port)
    spm_bytes: int  # spm.size
    lockstep: bool = False  # core.lockstep
    lockstep_mlp: float = 1.0  # core.lockstep_mlp
    first_latency: float = 0.0  # l1.latency (l2.latency when l1.size = 0)
    spm_latency: float = 0.0  # Machine.spm_latency (spm.latency or its capacity law)
    rule: str = ""  # the timing rule (hwmodel/timing: rule_of), e.g. "datapath"
    in_flight: int = 0  # datapath.ports x datapath.in_flight
    native: bool = False  # a CPU without a DMA engine (the `native` machine)

    @property
    def l1_share(self) -> int:
        return self.l1_bytes // 2

    @property
    def l2_share(self) -> int:
        return self.l2_bytes // 2

    @property
    def fence_cycles(self) -> float:
        return self.window_ops / self.issue_width / 2


NATIVE = "native"
"""The machine name of native code (`tapeflow-exec -p`): assumed to have no DMA engine;
Enzyme's layout everywhere (no streaming, no regions only)."""


@dataclass(frozen=True)
class Decision:
    """What the pipeline does with one region loop, and why (the remark's text)."""

    stream: bool
    reason: str
    regions: bool = False
    """Not streamed, but packed into a DRAM record tape (the "regions only" layout)."""


def nest_trip_count(loops: list[scf.ForOp]) -> int | None:
    """Iterations of the whole nest (product of constant trip counts; for a ragged nest,
    `tapeflow.transforms.ragged`, its records counted at compile time), else None."""
    total = 1
    for loop in loops:
        n = trip_count(loop)
        if n is None:
            return _ragged_records(loops)
        total *= n
    return total


def _ragged_records(loops: list[scf.ForOp]) -> int | None:
    """A ragged nest's iterations when every bound is a constant given the outer
    induction variables (a triangular nest of constant size), else None."""
    return iterations(loops) if isinstance(ragged_split(loops), int) else None


def cache_bytes(init: tape.InitOp) -> int | None:
    """Bytes Enzyme's layout gives one cache: element bytes x pushes, when every op around
    its pushes is an `scf.for` with a constant trip count; None otherwise."""
    total = 0
    for use in init.cache.uses:
        push = use.operation
        if not isinstance(push, tape.PushOp):
            continue
        loops, parent = [], push.parent_op()
        while parent is not None and not isinstance(parent, func.FuncOp):
            if isinstance(parent, scf.ForOp):
                loops.insert(0, parent)
            elif not isinstance(parent, scf.IfOp):  # a branch: its slot in every record
                return None
            parent = parent.parent_op()
        count = nest_trip_count(loops)
        if count is None:
            return None
        total += count * region.field_size(push.value.type)
    return total


def lockstep_hits(costs: MachineCosts, records: float, caches: int) -> float:
    """With a lockstep core, the cycles the tape's pushes and pops stall the datapath beyond
    the scratchpad's latency, `records` records of `caches` caches each, by the machine's
    timing rule: the datapath rule's steps (a record's accesses of one sweep launch
    together, `in_flight` per step, each step waiting for the slowest) or the phase rule's
    stall per access."""
    extra = max(0.0, costs.first_latency - costs.spm_latency)
    if costs.rule == "datapath":
        return 2 * records * math.ceil(caches / max(1, costs.in_flight)) * extra
    if not costs.lockstep:
        return 0.0
    return 2 * records * caches * extra / costs.lockstep_mlp


def enzyme_misses(
    costs: MachineCosts, tape_bytes: float, caches: int, fn_bytes: float, records: float = 0
) -> float:
    """E: cycles of the Enzyme layout's tape misses (and, with lockstep, hit latencies
    beyond the scratchpad's, `lockstep_hits` of its `records`) that the core waits for."""
    hits = lockstep_hits(costs, records, caches)
    if fn_bytes <= costs.l1_share:
        return hits
    latency = costs.l2_latency if fn_bytes <= costs.l2_share else costs.dram_latency
    if costs.prefetch and 2 * caches <= costs.table:
        lines = tape_bytes / costs.page
    else:
        lines = tape_bytes / costs.line
    return hits + 2 * lines * latency / costs.mlp


def stream_cost(costs: MachineCosts, tape_bytes: float, tile_bytes: float, fill: bool = True) -> float:
    """F: cycles streaming adds (DMA issue and fences per tile, fill and drain once)."""
    tiles = math.ceil(tape_bytes / tile_bytes) if tile_bytes > 0 else 1
    per_tile = 2 * costs.dma_issue / costs.issue_width + FENCES_PER_TILE * costs.fence_cycles
    once = 2 * (costs.dma_setup + costs.dram_latency + tile_bytes / costs.dma_bandwidth)
    once = once if fill else 0.0
    return tiles * per_tile + once


def decide(
    costs: MachineCosts,
    record_bytes: int,
    records: int | None,
    caches: int,
    fn_bytes: int | None,
    fn_record_bytes: int,
    spm_bytes: int,
    depth: int,
    indexed: bool = False,
) -> Decision:
    """Stream one region loop or keep Enzyme's layout (the rule of the module docstring).

    `records`: the nest's iterations (None: unknown); `fn_bytes`: the function's Enzyme
    tape bytes (None: unknown); `fn_record_bytes`: the record bytes of every region loop of
    the function (they share the scratchpad); `indexed`: Enzyme's layout indexes every
    cache of the loop by its counters (what matters when `records` is None)."""
    if costs.native:
        return Decision(False, "kept in Enzyme's layout: the native machine has no DMA engine")
    tile_records = max(1, spm_bytes // (depth * max(fn_record_bytes, 1)))
    if records is None:
        tile = tile_records * record_bytes
        e = enzyme_misses(costs, tile, caches, math.inf, tile_records)
        f = stream_cost(costs, tile, tile, fill=False)
        if e > f:
            return Decision(True, f"streamed: trip count known at run time; per tile of "
                                  f"{tile} B, misses ~{e:.0f} cycles > streaming ~{f:.0f}")  # fmt: skip
        if indexed:
            return Decision(False, f"{KEPT}: trip count known at the nest's entry (arrays "
                                   f"sized there); per tile of {tile} B, streaming ~{f:.0f} "
                                   f"cycles >= misses ~{e:.0f}")  # fmt: skip
        return Decision(False, f"packed into a DRAM record tape, layers skipped: trip "
                               f"count known at run time (Enzyme's layout would be a stack); "
                               f"per tile of {tile} B, streaming ~{f:.0f} cycles >= misses "
                               f"~{e:.0f}", regions=True)  # fmt: skip
    tape_bytes = records * record_bytes
    total = math.inf if fn_bytes is None else fn_bytes
    if total <= costs.l1_share and lockstep_hits(costs, records, caches) == 0:
        return Decision(False, f"{KEPT}: tape {fn_bytes} B fits the L1 share "
                               f"({costs.l1_share} B)")  # fmt: skip
    tile = min(tape_bytes, tile_records * record_bytes)
    e = enzyme_misses(costs, tape_bytes, caches, total, records)
    f = stream_cost(costs, tape_bytes, tile)
    where = "L2" if total <= costs.l2_share else "DRAM"
    how = "prefetched" if costs.prefetch and 2 * caches <= costs.table else "not prefetched"
    if e > f:
        return Decision(True, f"streamed: region tape {tape_bytes} B in {where} ({how}), misses "
                              f"~{e:.0f} cycles > streaming ~{f:.0f}")  # fmt: skip
    return Decision(False, f"{KEPT}: region tape {tape_bytes} B in {where} ({how}), "
                           f"streaming ~{f:.0f} cycles >= misses ~{e:.0f}")  # fmt: skip
