"""`tapeflow-layers{spm-bytes=N depth=D tile-bytes=T}`: strip-mine regions into layers.

Input: the output of `tapeflow-regions`, i.e. DRAM region tapes (`region.alloc`) each with
one `region.write` in the body of its forward loop and one `region.read` in the body of
its reverse loop. For every such *loop region* the pass strip-mines one forward loop of
its nest and the matching reverse loop into *layers* of `L` iterations, so that the
records of one layer (a *tile*, contiguous in the tape) fit the scratchpad. The reverse
sweep walks the layers in reverse, so that reverse layer `j` reads exactly the records
forward layer `j` wrote.

Which loop: the innermost one, unless a tile can hold two or more whole runs of it (a
constant trip count whose records, times 2, fit the tile): then the layer *spans* it and
the loop around it is strip-mined instead, and so on outwards while the records of one
iteration of the next loop out, times 2, still fit (never past the outermost loop). A
tile then holds `L` iterations of the strip-mined loop with every iteration of the loops
inside it, `L x P` records for `P` records per iteration: a region in an 8-iteration loop
inside a 128-iteration one gets tiles of `64 x 8` records in a 512-record budget, not 8.
The spanned loops stay plain loops inside the tile loop; `tapeflow.layer_span` on the
`region.alloc` says how many there are. For the innermost loop (span 0):

```
// forward, n iterations of `scf.for %i = %lb to %ub step %s`, nl = ceil(n / L)
scf.for %start = %c0 to %n step %L {                    // {tapeflow.layer = L}
  %end = min(%start + L, n)
  scf.for %i = %lb + %start * %s to %lb + %end * %s step %s {   // {tapeflow.loop = N}
    ...original body...
  }
}
// reverse, counter `k` from lb_r by step_r, n iterations (k stands for primal n-1-k)
scf.for %sr = %c0 to %n step %L {                       // {tapeflow.layer = L}
  %start = (nl - 1) * L - %sr ; %end = min(%start + L, n)
  scf.for %k = lb_r + (n - %end) * step_r to lb_r + (n - %start) * step_r step step_r {
    ...original body...                                 // {tapeflow.loop = N}
  }
}
```

The layer loop's bounds carry `n` and `L`; the tile loop runs the original induction
variable (or reverse counter), so the body is unchanged and costs nothing more per
iteration. `iter_args` (the reverse sweep's adjoint accumulators) are threaded through both loops.
The last layer holds `n - (nl-1)*L` iterations when `L` does not divide `n`. A dynamic
`n` gets its layers sized at run time: `L` (from the budget, below) is the tile's
capacity, and the layer loop steps by `L' = max(1, ceil(n / ceil(n / L)))`, computed
before the nest (a 7-iteration loop gets one layer of 7 iterations, not of `L`);
`tapeflow.layer` keeps the capacity `L`. The tape itself is
untouched: it stays in DRAM, indexed as before, so the program's meaning is unchanged;
`tapeflow-stream` turns the tiles into DMA transfers.

Budget split rule
-----------------
All loop regions of one function share the scratchpad, conservatively as if they were all
live at once (nested loops are). Each region needs `depth` tile buffers of `R` records of
`S` bytes. The budget is split in proportion to record size, which gives every region of
the function the same number of records per tile:
`R = floor(spm_bytes / (depth * sum(S)))`, capped at `floor(tile_bytes / S_max)` when
`tile-bytes` > 0 (so that a tile of every region fits `tile-bytes`), and at the records
of the largest nest when every trip count is a constant (no tile larger than a nest).
Region `r` gets `depth * R * S_r` bytes, recorded on its `region.alloc` as
`tapeflow.spm_bytes`. A region writing `P` records per iteration of its strip-mined loop
gets layers of `L = floor(R / P)` iterations. When that loop's trip count `n` is a
constant, the layers are balanced: `L' = ceil(n / ceil(n / L))` (the same number of
layers, none mostly empty: 1024 iterations with `L = 341` give 4 layers of 256, not 3 of
341 and one of 1); the tile's `L' x P` records are recorded as `tapeflow.layer_records`.
When `R` would be 0 the pass fails and says how many bytes one record of each region,
times `depth`, needs. Regions strip-mining the same loop (two segments of one body, or a
region spanning the loop another region is in) share its layers, with the smallest `L`.
Straight-line regions (one record) are not layered; they stay in DRAM.

Ragged regions
--------------
A ragged region (`tapeflow.ragged`, `tapeflow.transforms.ragged`) writes a different number
of records in each outer iteration, so its layers are ranges of *records*, not of
iterations: a tile is `L` consecutive records (`R` from the budget above, balanced over the
record count when it is a constant), and each run of the innermost forward loop, records
`b .. b+n-1`, becomes a loop over the tiles it touches (`tapeflow.layer = L`,
`tapeflow.ragged`) around one *piece* per tile, the iterations of records
`max(b, tL) .. min(b+n, (t+1)L) - 1`; the reverse run walks its pieces backwards. A tile
boundary may thus fall inside an outer iteration, and a tile may hold several outer
iterations. `b` is the record index of the run's first iteration (the region's index
arithmetic evaluated there); bodies and record indices are unchanged.

While regions
-------------
A while region (`tapeflow.growable`, `tapeflow.transforms.while_regions`) is layered as a
ragged region whose record count is unknown: tiles of `L` records (`R`, never balanced),
its reverse runs cut into pieces; its forward `scf.while` is left whole, since its
iterations are known only as it runs (`tapeflow-stream` cuts them there).

Options (defaults in transforms/options.py): `spm-bytes` (> 0, default the default
machine's `spm.size`), `depth` (>= 1, default 2: the number of tile buffers per region
`tapeflow-stream` will use), `tile-bytes` (>= 0, default 0 = no cap).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tapeflow.dialects import region
from tapeflow.transforms.analysis import budget
from tapeflow.transforms.analysis.constants import const_int, trip_count
from tapeflow.transforms.index_utils import (
    IndexBuilder,
    check_steps,
    prune_constants,
)
from tapeflow.transforms.options import DEFAULT_DEPTH, DEFAULT_SPM_BYTES, check_options
from tapeflow.transforms.ragged import RAGGED_ATTR, value_at
from tapeflow.transforms.while_regions import counted_while
from xdsl.context import Context
from xdsl.dialects import builtin, func, scf
from xdsl.dialects.arith import CmpiOp, SelectOp
from xdsl.dialects.builtin import IndexType, IntegerAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error

LAYER_ATTR = "tapeflow.layer"
"""On a layer loop: the number of iterations (records) per layer."""
LAYER_RECORDS_ATTR = "tapeflow.layer_records"
"""On a layered `region.alloc`: records per layer (= per tile)."""
SPM_BYTES_ATTR = "tapeflow.spm_bytes"
"""On a layered `region.alloc`: the scratchpad bytes granted to the region."""
SPAN_ATTR = "tapeflow.layer_span"
"""On a layered `region.alloc` whose layers span loops: how many loops of its nest, inside
the strip-mined one, each tile holds whole (absent: 0, the innermost loop is strip-mined)."""


@dataclass
class LoopRegion:
    """A region tape with its writer and reader and their loop nests (outermost first)."""

    alloc: region.AllocOp
    write: region.WriteOp
    read: region.ReadOp
    fwd: list[scf.ForOp]
    rev: list[scf.ForOp]
    while_op: scf.WhileOp | None = None
    """A while region's loop (`while_regions`): `fwd` are the loops around it, the write
    is in its body; its tape grows, and only its reverse loop is cut into pieces."""

    @property
    def record_bytes(self) -> int:
        return region.record_of(self.alloc.tape).size

    @property
    def layered(self) -> bool:
        return LAYER_RECORDS_ATTR in self.alloc.attributes

    @property
    def span(self) -> int:
        """How many innermost loops of the nest one tile holds whole (see SPAN_ATTR)."""
        attr = self.alloc.attributes.get(SPAN_ATTR)
        return attr.value.data if isinstance(attr, IntegerAttr) else 0

    @property
    def ragged(self) -> bool:
        """Records indexed by running offsets (`tapeflow.transforms.ragged`)."""
        return RAGGED_ATTR in self.alloc.attributes

    @property
    def tile_records(self) -> int:
        """Records per tile of a layered region."""
        attr = self.alloc.attributes[LAYER_RECORDS_ATTR]
        assert isinstance(attr, IntegerAttr)
        return attr.value.data


def _chain(op: Operation, block: Block) -> list[scf.ForOp] | None:
    """The `scf.for`s between `block` and `op`, outermost first; None if another op is."""
    chain: list[scf.ForOp] = []
    current = op
    while current.parent_block() is not block:
        parent = current.parent_op()
        if not isinstance(parent, scf.ForOp):
            return None
        chain.append(parent)
        current = parent
    chain.reverse()
    return chain


def find_loop_regions(fn: func.FuncOp) -> list[LoopRegion]:
    """Every DRAM region tape of `fn` with one writer and one reader inside loops."""
    found: list[LoopRegion] = []
    for op in fn.walk():
        if not isinstance(op, region.AllocOp):
            continue
        tape_type = op.tape.type
        assert isinstance(tape_type, region.TapeType)
        if tape_type.in_spm or "tapeflow.dram" in op.attributes:
            continue
        writes = [u.operation for u in op.tape.uses if isinstance(u.operation, region.WriteOp)]
        reads = [u.operation for u in op.tape.uses if isinstance(u.operation, region.ReadOp)]
        if len(writes) != 1 or len(reads) != 1:
            continue
        block = op.parent_block()
        assert block is not None
        while_op = counted_while(writes[0]) if op.growable else None
        fwd = _chain(while_op or writes[0], block)
        rev = _chain(reads[0], block)
        if fwd is None or not rev or not (fwd or while_op):
            continue
        found.append(LoopRegion(op, writes[0], reads[0], fwd, rev, while_op))
    return found


def _strip_mine(
    loop: scf.ForOp, layer: int, size: SSAValue, n: SSAValue, nl: SSAValue, reverse: bool
) -> None:
    """Replaces `loop` by a layer loop over `nl` layers of `layer` iterations (see above).

    The layer loop steps over the first (normalized) iteration of each layer,
    `0 to n step L`, so that its bounds say `n` and `L`; the tile loop runs the original
    induction variable (or reverse counter) over the layer's iterations, so that the body
    is unchanged and pays nothing per iteration.
    """
    ib = IndexBuilder(InsertPoint.before(loop))
    c0 = ib.const(0)
    index = IndexType()
    iter_types = [a.type for a in loop.iter_args]
    last_start = ib.mul(ib.sub(nl, ib.const(1)), size) if reverse else None

    layer_block = Block(arg_types=[index, *iter_types])
    lb_ = IndexBuilder(InsertPoint.at_end(layer_block))
    sarg = layer_block.args[0]
    start = lb_.sub(last_start, sarg) if last_start is not None else sarg
    end = lb_.min(lb_.add(start, size), n)
    if reverse:
        # The reverse counter's iterations n-end ... n-start-1 are primal end-1 ... start.
        first, past = lb_.sub(n, end), lb_.sub(n, start)
    else:
        first, past = start, end
    tile_lb = lb_.add(loop.lb, lb_.mul(first, loop.step))
    tile_ub = lb_.add(loop.lb, lb_.mul(past, loop.step))

    _move_body(loop, layer_block, tile_lb, tile_ub)
    layer_loop = scf.ForOp(c0, n, size, list(loop.iter_args), layer_block)
    layer_loop.attributes[LAYER_ATTR] = IntegerAttr(layer, i64)
    _replace_loop(loop, layer_loop)
    ib.prune()
    lb_.prune()


def _strip_mine_ragged(
    loop: scf.ForOp, index: SSAValue, layer: int, reverse: bool
) -> None:
    """Splits each run of the innermost loop of a ragged region into pieces, one per tile
    of `layer` records it writes (reads) into: `index` is the record index in the body.

    The run's records are `b .. b+n-1` (`b` = the index at the first iteration; in reverse,
    at the first reverse iteration, minus `n - 1`); piece `t` (tiles `b / L` to
    `ceil((b + n) / L)`, none when `n = 0`; reversed in the reverse sweep) runs the
    iterations of records `max(b, t L) .. min(b + n, (t + 1) L) - 1`. The body and its
    record index are unchanged.
    """
    ib = IndexBuilder(InsertPoint.before(loop))
    n = ib.trip_count(loop)
    first = value_at(index, loop, loop.lb, ib)
    b = ib.add(ib.sub(first, n), ib.const(1)) if reverse else first
    size = ib.const(layer)
    tf = ib.div(b, size)
    bn = ib.add(b, n)
    past = ib.ceildiv(bn, size)
    empty = ib._insert(CmpiOp(n, ib.const(0), "sle"))
    tl = ib._insert(SelectOp(empty, tf, past))
    last_t = ib.sub(ib.add(tf, tl), ib.const(1)) if reverse else None

    iter_types = [a.type for a in loop.iter_args]
    layer_block = Block(arg_types=[IndexType(), *iter_types])
    lb_ = IndexBuilder(InsertPoint.at_end(layer_block))
    t = lb_.sub(last_t, layer_block.args[0]) if last_t is not None else layer_block.args[0]
    tk = lb_.mul(t, size)
    start = lb_.max(b, tk)
    end = lb_.min(bn, lb_.add(tk, size))
    if reverse:
        # Records start .. end-1 are reverse iterations n-1-(end-1-b) .. n-1-(start-b).
        first_it, past_it = lb_.sub(bn, end), lb_.sub(bn, start)
    else:
        first_it, past_it = lb_.sub(start, b), lb_.sub(end, b)
    tile_lb = lb_.add(loop.lb, lb_.mul(first_it, loop.step))
    tile_ub = lb_.add(loop.lb, lb_.mul(past_it, loop.step))
    _move_body(loop, layer_block, tile_lb, tile_ub)
    layer_loop = scf.ForOp(tf, tl, ib.const(1), list(loop.iter_args), layer_block)
    layer_loop.attributes[LAYER_ATTR] = IntegerAttr(layer, i64)
    layer_loop.attributes[RAGGED_ATTR] = builtin.UnitAttr()
    _replace_loop(loop, layer_loop)
    ib.prune()
    lb_.prune()


def _move_body(loop: scf.ForOp, layer_block: Block, tile_lb: SSAValue, tile_ub: SSAValue) -> None:
    """Ends `layer_block` with a tile loop from `tile_lb` to `tile_ub` running `loop`'s body
    (its `iter_args` threaded from the layer block's) and the yield of its results."""
    tile_block = Block(arg_types=[IndexType(), *[a.type for a in loop.iter_args]])
    Rewriter.inline_block(loop.body.block, InsertPoint.at_end(tile_block), tile_block.args)
    tile_loop = scf.ForOp(tile_lb, tile_ub, loop.step, list(layer_block.args[1:]), tile_block)
    tile_loop.attributes.update(loop.attributes)
    layer_block.add_op(tile_loop)
    layer_block.add_op(scf.YieldOp(*tile_loop.results))


def _replace_loop(loop: scf.ForOp, layer_loop: scf.ForOp) -> None:
    Rewriter.insert_op(layer_loop, InsertPoint.before(loop))
    for old, new in zip(loop.results, layer_loop.results):
        old.replace_all_uses_with(new)
    Rewriter.erase_op(loop)


def layer_ragged(r: LoopRegion, layer: int, share: int | None, done: set[int]) -> None:
    """Layers a ragged region: tiles of `layer` consecutive records (balanced when the
    record count is a constant), each innermost run split at tile boundaries.

    Regions of one nest (pushes in several segments of its innermost body) have the same
    record indices, so the same pieces: the loops `done` (by id) were split for an earlier
    one and are left as they are."""
    total = r.alloc.static_count
    if total is not None and total > 0 and r.while_op is None:
        layer = -(-total // -(-total // layer))
    r.alloc.attributes[LAYER_RECORDS_ATTR] = IntegerAttr(layer, i64)
    if share is not None:
        r.alloc.attributes[SPM_BYTES_ATTR] = IntegerAttr(share, i64)
    pieces = [(r.rev[-1], r.read.index, True)]
    if r.while_op is None:  # a while's iterations are cut as it runs (`tapeflow-stream`)
        pieces.append((r.fwd[-1], r.write.index, False))
    for loop, index, reverse in pieces:
        if id(loop) not in done:
            done.add(id(loop))
            _strip_mine_ragged(loop, index, layer, reverse)


def spanned_loops(r: LoopRegion, records: int) -> tuple[int, int]:
    """How many innermost loops of `r`'s nest a tile of at most `records` records can hold
    whole, and how many records one iteration of the loop around them writes.

    A spanned loop needs a constant trip count (so that the records of one iteration of
    the strip-mined loop are known) and stays a plain loop; the outermost loop is never
    spanned (it is the one strip-mined when the whole nest fits). A loop is spanned only
    when a tile can hold two of its whole runs: with room for one, a layer of the loop
    itself makes the same tiles, and regions strip-mining the loop around it would have to
    share layers of one iteration.
    """
    span, per_iteration = 0, 1
    for loop in reversed(r.fwd[1:]):
        n = trip_count(loop)
        if n is None or LAYER_ATTR in loop.attributes or 2 * per_iteration * max(n, 1) > records:
            break
        span += 1
        per_iteration *= max(n, 1)
    return span, per_iteration


def layer_regions(
    regions: list[LoopRegion], records: dict[int, int], shares: dict[int, int] | None = None
) -> None:
    """Strip-mines each region's nest into layers whose tiles hold at most
    `records[id(region)]` records: the loop around the innermost loops a tile can hold
    whole (`spanned_loops`) is strip-mined into layers of `L` of its iterations.

    Regions whose strip-mined loop is the same share its layers (the smallest `L` among
    them).
    """
    by_loop: dict[int, list[tuple[LoopRegion, int, int]]] = {}
    split: set[int] = set()
    for r in regions:
        if r.ragged or r.while_op is not None:
            # The innermost loops first, before any loop around them is strip-mined.
            layer_ragged(r, records[id(r)], None if shares is None else shares[id(r)], split)
    for r in regions:
        if r.ragged or r.while_op is not None:
            continue
        span, per_iteration = spanned_loops(r, records[id(r)])
        level = len(r.fwd) - 1 - span
        by_loop.setdefault(id(r.fwd[level]), []).append((r, level, per_iteration))
    done_rev: set[int] = set()
    # Deepest loops first: strip-mining replaces a loop, and the loops around it must
    # still be the ones the other regions refer to.
    for group in sorted(by_loop.values(), key=lambda g: -g[0][1]):
        layer = min(records[id(r)] // per_iteration for r, _, per_iteration in group)
        first, level, _ = group[0]
        ib = IndexBuilder(InsertPoint.before(first.fwd[0]))
        n = ib.trip_count(first.fwd[level])
        cn = const_int(n)
        if cn is not None and cn > 0:
            # Balanced layers: as few layers as the budget allows, all (nearly) equally
            # full, so that the last tile is not mostly padding.
            layer = -(-cn // -(-cn // layer))
        nl = ib.ceildiv(n, ib.const(layer))
        # A trip count known at run time: the same balancing at run time, so that a short
        # loop gets layers (and tiles) of its own size, not `layer` iterations mostly empty.
        size = ib.const(layer)
        if cn is None:
            size = ib.max(ib.ceildiv(n, ib.max(nl, ib.const(1))), ib.const(1))
            nl = ib.ceildiv(n, size)
        for r, _, per_iteration in group:
            r.alloc.attributes[LAYER_RECORDS_ATTR] = IntegerAttr(layer * per_iteration, i64)
            if shares is not None:
                r.alloc.attributes[SPM_BYTES_ATTR] = IntegerAttr(shares[id(r)], i64)
            if level < len(r.fwd) - 1:
                r.alloc.attributes[SPAN_ATTR] = IntegerAttr(len(r.fwd) - 1 - level, i64)
        for r, _, _ in group:
            if id(r.rev[level]) not in done_rev:
                done_rev.add(id(r.rev[level]))
                _strip_mine(r.rev[level], layer, size, n, nl, reverse=True)
        _strip_mine(first.fwd[level], layer, size, n, nl, reverse=False)
        ib.prune()


def layer_size(
    fn: func.FuncOp, regions: list[LoopRegion], spm_bytes: int, depth: int, tile_bytes: int
) -> tuple[int, dict[int, int]]:
    """Records per layer for the regions of `fn`, and each region's share in bytes."""
    total = sum(r.record_bytes for r in regions)
    widest = max(r.record_bytes for r in regions)
    nests = [_nest_records(r) for r in regions]
    largest = None if any(n is None for n in nests) else max(nests)  # type: ignore[type-var]
    rule = functools.partial(layer_records, total, widest, largest, depth=depth,
                             tile_bytes=tile_bytes)  # fmt: skip
    layer = budget.layered(rule, spm_bytes)
    if spm_bytes < depth * total:
        sizes = " + ".join(str(r.record_bytes) for r in regions)
        raise PassFailedException(
            op_error(
                fn,
                f"scratchpad of {spm_bytes} bytes is too small for @{fn.sym_name.data}: "
                f"{len(regions)} region(s) need at least {depth * total} bytes "
                f"(depth {depth} x one record of each region: {sizes} bytes)",
            )
        )
    if layer == 0:
        raise PassFailedException(
            op_error(
                fn,
                f"tile-bytes={tile_bytes} is too small for one record: "
                f"@{fn.sym_name.data} needs at least {widest} bytes per tile",
            )
        )
    shares = {id(r): depth * layer * r.record_bytes for r in regions}
    return layer, shares


def layer_records(total: int, widest: int, largest: int | None, spm_bytes: int, *,
                  depth: int, tile_bytes: int) -> int:  # fmt: skip
    """Records per layer of a function whose regions' records are `total` bytes together,
    the widest `widest`, the largest nest `largest` records (None: not constant): the
    budget split rule of the module docstring; 0 when `depth` records of each region do
    not fit `spm_bytes`, or one record does not fit `tile_bytes`."""
    if spm_bytes < depth * total or 0 < tile_bytes < widest:
        return 0
    layer = spm_bytes // (depth * total)
    if tile_bytes > 0:
        layer = min(layer, tile_bytes // widest)
    # No tile larger than a whole nest, when every nest's size is known.
    return layer if largest is None else min(layer, largest)


def _nest_records(r: LoopRegion) -> int | None:
    """The number of records `r`'s whole nest writes (at least 1), if constant."""
    if r.while_op is not None:
        return None
    if r.ragged:
        return None if r.alloc.static_count is None else max(r.alloc.static_count, 1)
    total = 1
    for loop in r.fwd:
        n = trip_count(loop)
        if n is None:
            return None
        total *= max(n, 1)
    return total


@dataclass(frozen=True)
class LayersPass(ModulePass):
    """Strip-mines each region's forward and reverse loops into scratchpad-sized layers."""

    name = "tapeflow-layers"

    spm_bytes: int = DEFAULT_SPM_BYTES
    depth: int = DEFAULT_DEPTH
    tile_bytes: int = 0

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        check_options(
            self.name,
            spm_bytes=(self.spm_bytes, 1),
            depth=(self.depth, 1),
            tile_bytes=(self.tile_bytes, 0),
        )
        check_steps(op)
        plans: list[tuple[list[LoopRegion], int, dict[int, int]]] = []
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            regions = [r for r in find_loop_regions(fn) if not r.layered]
            if not regions:
                continue
            layer, shares = layer_size(fn, regions, self.spm_bytes, self.depth, self.tile_bytes)
            plans.append((regions, layer, shares))
        # Check every function before changing any: nothing is half-done on failure.
        for regions, layer, shares in plans:
            layer_regions(regions, {id(r): layer for r in regions}, shares)
        prune_constants(op)
