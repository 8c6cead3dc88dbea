"""`tapeflow-stream{tile-bytes=T depth=D}`: stream layer tiles through the scratchpad by DMA.

Input: layered regions (`tapeflow-layers`), i.e. a DRAM `region.alloc` whose single
`region.write` sits in a tile loop inside a layer loop (`tapeflow.layer = K`) of the forward
sweep, and whose single `region.read` sits likewise in the reverse sweep. Each layer's `K`
records form one *tile*. The pass replaces the DRAM tape by a `!stream.fifo<R, K>` of
`T` tile slots in DRAM (`T` = product of the enclosing loops' trip counts x the number of
layers; slot `g = outer * nl + j` for layer `j` of outer iteration `outer`) and `D`
scratchpad buffers `!region.tape<R, #stream.spm>` of `K` records; tile `g` uses buffer
`g mod D` (an `arith.select` over the buffers).

```
// forward layer j (tile g)                      // reverse layer j (tile g), reverse order
%b = select(g mod D, %buf0, ..., %bufD-1)       %b = select(g mod D, ...)
stream.acquire_write %b   // its last commit    stream.acquire_read %b    // wait for tile g,
scf.for ... { region.write %b[t - start], ...}  scf.for ... { region.read %b[cnt-1-kk] ... }
%tok = stream.commit %b -> %fifo[g]  // async    stream.release %b
scf.if (g >= T - D) { stream.wait %tok }        scf.if (g >= D) { prefetch %fifo[g-D] -> %b }
```

Right after the region's forward loop nest, a prologue prefetches the last `D` tiles
(`T-1 ... T-D`, those that exist) into their buffers, so that these DMAs overlap whatever
runs before the region's reverse sweep (other regions' reverse sweeps, for instance).
So while the reverse sweep works on tile `g`, tiles `g-1 ... g-D+1` are already in
flight, and each acquire waits only right before the tile's first use. `D = 1` gives no
overlap (each tile is fetched after the previous one is released); `D >= 2` overlaps DMA
with compute in both sweeps. In the forward sweep a buffer's commit is waited for when the
buffer is next acquired, `D` tiles later; the last `D` commits are waited for right after
they are issued, so every DMA has completed before the reverse sweep prefetches, and every
token is waited on exactly once. A partial last tile (the trip count not a multiple of
`K`) is committed whole; only its written records are read back.

Regions that are not layered are strip-mined first with tiles of
`floor(tile-bytes / record size)` records (so `tapeflow-regions,tapeflow-stream{tile-bytes=..}`
works on its own). For a layered region `tile-bytes`, when given, must hold one layer's
tile, and `D` buffers must fit the scratchpad bytes `tapeflow-layers` granted the region.
Straight-line regions (one record) stay in DRAM.

Options: `tile-bytes` (>= 0; 0 = the layer's tile), `depth` (>= 1, default 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from tapeflow.dialects import region, stream
from tapeflow.transforms.index_utils import (
    IndexBuilder,
    const_int,
    erase_dead,
    prune_constants,
)
from tapeflow.transforms.layers import (
    LAYER_ATTR,
    SPM_BYTES_ATTR,
    LoopRegion,
    check_options,
    find_loop_regions,
    layer_regions,
)
from xdsl.context import Context
from xdsl.dialects import builtin, func, scf
from xdsl.dialects.arith import CmpiOp, MinSIOp, RemSIOp, SelectOp
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error


def _layer_records(r: LoopRegion) -> int:
    attr = r.fwd[-2].attributes[LAYER_ATTR]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


class _Emitter(IndexBuilder):
    """IndexBuilder that also emits the stream-specific ops."""

    def cmp(self, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
        return self._insert(CmpiOp(a, b, pred))

    def rem(self, a: SSAValue, d: int) -> SSAValue:
        ca = const_int(a)
        if ca is not None:
            return self.const(ca % d)
        if d == 1:
            return self.const(0)
        return self._insert(RemSIOp(a, self.const(d)))

    def buffer(self, g: SSAValue, buffers: list[SSAValue]) -> SSAValue:
        """buffers[g mod D]."""
        slot = self.rem(g, len(buffers))
        cs = const_int(slot)
        if cs is not None:
            return buffers[cs]
        chosen = buffers[0]
        for d in range(1, len(buffers)):
            is_d = self.cmp(slot, self.const(d), "eq")
            chosen = self._insert(SelectOp(is_d, buffers[d], chosen))
        return chosen

    def op(self, op: Operation) -> Operation:
        Rewriter.insert_op(op, self.point)
        return op

    def guarded(self, cond_lhs: SSAValue, cond_rhs: SSAValue, body: list[Operation]) -> None:
        """Emits `body` under `scf.if cond_lhs >= cond_rhs` (folded when constant)."""
        cl, cr = const_int(cond_lhs), const_int(cond_rhs)
        if cl is not None and cr is not None:
            if cl >= cr:
                for o in body:
                    self.op(o)
            else:
                for o in body:
                    o.erase()
            return
        cond = self.cmp(cond_lhs, cond_rhs, "sge")
        block = Block()
        block.add_ops([*body, scf.YieldOp()])
        self.op(scf.IfOp(cond, [], [block]))


def _logical_loops(
    chain: list[scf.ForOp], anchor: _Emitter
) -> list[tuple[list[scf.ForOp], SSAValue]]:
    """Groups `chain` into the loops of the original program with their sizes.

    A layer loop and its tile loop (an outer region strip-mined by `tapeflow-layers`) count
    as one loop, of the original trip count; any other loop counts with its trip count.
    Sizes are computed by `anchor`, before the outermost loop.
    """
    groups: list[tuple[list[scf.ForOp], SSAValue]] = []
    i = 0
    while i < len(chain):
        loop = chain[i]
        attr = loop.attributes.get(LAYER_ATTR)
        if isinstance(attr, IntegerAttr) and i + 1 < len(chain):
            groups.append(([loop, chain[i + 1]], _strip_mined_trip_count(chain[i + 1])))
            i += 2
        else:
            groups.append(([loop], anchor.trip_count(loop)))
            i += 1
    return groups


def _strip_mined_trip_count(tile: scf.ForOp) -> SSAValue:
    """The original trip count `n` of a forward tile loop `%start to min(%start + L, n)`."""
    bound = tile.ub.owner
    if isinstance(bound, SelectOp):
        return bound.operands[2]
    if isinstance(bound, MinSIOp):
        return bound.operands[1]
    raise PassFailedException(
        op_error(tile, "cannot recover the trip count of a loop strip-mined by tapeflow-layers")
    )


def _outer_index(groups: list[tuple[list[scf.ForOp], SSAValue]], rev: bool) -> SSAValue | None:
    """Linear index of the current iteration of `groups`, built level by level at the top
    of each innermost body; for a reverse nest, of the primal iteration it stands for."""
    index: SSAValue | None = None
    for loops, size in groups:
        inner = loops[-1]
        eb = _Emitter(InsertPoint.at_start(inner.body.block))
        if len(loops) == 2:
            layer, tile = loops
            attr = layer.attributes[LAYER_ATTR]
            assert isinstance(attr, IntegerAttr)
            size_l = eb.const(attr.value.data)
            if rev:
                j = eb.sub(eb.sub(layer.ub, eb.const(1)), eb.normalized_iv(layer))
                within = eb.sub(eb.sub(eb.trip_count(tile), eb.const(1)), eb.normalized_iv(tile))
            else:
                j = eb.normalized_iv(layer)
                within = eb.normalized_iv(tile)
            it = eb.add(eb.mul(j, size_l), within)
        else:
            it = eb.normalized_iv(inner)
            if rev:
                it = eb.sub(eb.sub(size, eb.const(1)), it)
        index = it if index is None else eb.add(eb.mul(index, size), it)
    return index


def _pair(chain: list[scf.ForOp]) -> list[list[scf.ForOp]]:
    """`chain` grouped like `_logical_loops` does, without computing sizes."""
    groups: list[list[scf.ForOp]] = []
    i = 0
    while i < len(chain):
        if LAYER_ATTR in chain[i].attributes and i + 1 < len(chain):
            groups.append(chain[i : i + 2])
            i += 2
        else:
            groups.append([chain[i]])
            i += 1
    return groups


def _stream_region(r: LoopRegion, depth: int) -> None:
    k = _layer_records(r)
    record = region.record_of(r.alloc.tape)
    fifo_type = stream.FifoType(record, k)
    spm_type = region.TapeType(record, stream.SpmAttr())
    outer_f, fl, ft = r.fwd[:-2], r.fwd[-2], r.fwd[-1]
    outer_r, rl, rt = r.rev[:-2], r.rev[-2], r.rev[-1]

    # FIFO and buffers, before the outermost forward loop.
    eb = _Emitter(InsertPoint.before(r.fwd[0]))
    groups_f = _logical_loops(outer_f, eb)
    pairs_r = _pair(outer_r)
    if [len(p) for p in pairs_r] != [len(g) for g, _ in groups_f]:
        raise PassFailedException(
            op_error(r.alloc, "forward and reverse loop nests of the region do not match")
        )
    groups_r = [(loops_r, size) for loops_r, (_, size) in zip(pairs_r, groups_f)]
    nl = fl.ub
    total = nl
    for _, s in groups_f:
        total = eb.mul(total, s)
    ct = const_int(total)
    fifo = stream.FifoAllocOp(fifo_type, ct if ct is not None and ct >= 1 else total)
    eb.op(fifo)
    buffers = [eb.op(region.AllocOp(spm_type, k)).results[0] for _ in range(depth)]
    tail = eb.sub(total, eb.const(depth))
    c0 = eb.const(0)
    d_const = eb.const(depth)
    c1 = eb.const(1)
    last = eb.sub(total, c1)

    # Forward: acquire before the tile loop, write into the buffer, commit after it.
    fb = _Emitter(InsertPoint.before(ft))
    outer = _outer_index(groups_f, False)
    j = fb.normalized_iv(fl)
    g = j if outer is None else fb.add(fb.mul(outer, nl), j)
    buf = fb.buffer(g, buffers)
    fb.op(stream.AcquireWriteOp(buf))
    wb = _Emitter(InsertPoint.before(r.write))
    windex = wb.normalized_iv(ft)
    wb.op(region.WriteOp(buf, windex, list(r.write.values)))
    old_index = r.write.index
    Rewriter.erase_op(r.write)
    erase_dead(old_index)
    cb = _Emitter(InsertPoint.after(ft))
    commit = stream.CommitOp(fifo.fifo, g, buf)
    cb.op(commit)
    cb.guarded(g, tail, [stream.WaitOp(commit.token)])

    # Reverse prologue: prefetch the last `depth` tiles as soon as the forward sweep of the
    # region is over, so that their DMA overlaps whatever runs before its reverse sweep.
    pb = _Emitter(InsertPoint.after(r.fwd[0]))
    for d in range(depth):
        tile = pb.sub(last, pb.const(d))
        ctile = const_int(tile)
        if ctile is not None:
            if ctile >= 0:
                pb.op(stream.PrefetchOp(fifo.fifo, tile, buffers[ctile % depth]))
            continue
        cond = pb.cmp(tile, c0, "sge")
        block = Block()
        inner = _Emitter(InsertPoint.at_end(block))
        inner.op(stream.PrefetchOp(fifo.fifo, tile, inner.buffer(tile, buffers)))
        inner.op(scf.YieldOp())
        pb.op(scf.IfOp(cond, [], [block]))

    # Reverse: acquire before the tile loop, read from the buffer, release and prefetch after.
    rb = _Emitter(InsertPoint.before(rt))
    j = rb.sub(rb.sub(nl, c1), rb.normalized_iv(rl))
    outer = _outer_index(groups_r, True)
    g = j if outer is None else rb.add(rb.mul(outer, nl), j)
    buf = rb.buffer(g, buffers)
    rb.op(stream.AcquireReadOp(buf))
    count_m1 = rb.sub(rb.trip_count(rt), c1)
    ib = _Emitter(InsertPoint.before(r.read))
    rindex = ib.sub(count_m1, ib.normalized_iv(rt))
    new_read = region.ReadOp(buf, rindex)
    ib.op(new_read)
    for old, new in zip(r.read.values, new_read.values):
        old.replace_all_uses_with(new)
    old_index = r.read.index
    Rewriter.erase_op(r.read)
    erase_dead(old_index)
    ab = _Emitter(InsertPoint.after(rt))
    ab.op(stream.ReleaseOp(buf))
    nxt = ab.sub(g, d_const)
    ab.guarded(g, d_const, [stream.PrefetchOp(fifo.fifo, nxt, buf)])

    # Release everything where the DRAM tape was released.
    for use in list(r.alloc.tape.uses):
        dealloc = use.operation
        assert isinstance(dealloc, region.DeallocOp)
        db = _Emitter(InsertPoint.before(dealloc))
        db.op(stream.FifoDeallocOp(fifo.fifo))
        for b in buffers:
            db.op(region.DeallocOp(b))
        Rewriter.erase_op(dealloc)
    Rewriter.erase_op(r.alloc)
    for e in (eb, fb, wb, cb, pb, rb, ib, ab):
        e.prune()


def _plan(fn: func.FuncOp, tile_bytes: int, depth: int) -> list[tuple[LoopRegion, int]]:
    """Checks the regions of `fn`; returns the unlayered ones with their tile size."""
    todo: list[tuple[LoopRegion, int]] = []
    for r in find_loop_regions(fn):
        size = r.record_bytes
        if not r.layered:
            if tile_bytes == 0:
                raise PassFailedException(
                    op_error(
                        r.alloc,
                        "region tape is not layered: run tapeflow-layers first or give "
                        "tapeflow-stream a tile-bytes option",
                    )
                )
            if tile_bytes < size:
                raise PassFailedException(
                    op_error(
                        r.alloc,
                        f"tile-bytes={tile_bytes} is too small for one record: "
                        f"a tile needs at least {size} bytes",
                    )
                )
            todo.append((r, tile_bytes // size))
            continue
        k = _layer_records(r)
        if tile_bytes and k * size > tile_bytes:
            raise PassFailedException(
                op_error(
                    r.alloc,
                    f"a layer's tile is {k} records x {size} bytes = {k * size} bytes, more "
                    f"than tile-bytes={tile_bytes}; run tapeflow-layers with "
                    f"tile-bytes={tile_bytes}",
                )
            )
        share = r.alloc.attributes.get(SPM_BYTES_ATTR)
        if isinstance(share, IntegerAttr) and depth * k * size > share.value.data:
            raise PassFailedException(
                op_error(
                    r.alloc,
                    f"depth {depth} needs {depth * k * size} scratchpad bytes "
                    f"({depth} x {k} x {size}) but tapeflow-layers granted "
                    f"{share.value.data}; run it with depth={depth}",
                )
            )
    return todo


@dataclass(frozen=True)
class StreamPass(ModulePass):
    """Turns layer tiles into a DRAM FIFO of tiles fed and drained by prefetching DMA."""

    name = "tapeflow-stream"

    tile_bytes: int = 0
    depth: int = 2

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        check_options(
            self.name,
            tile_bytes=(self.tile_bytes, 0),  # type: ignore[arg-type]
            depth=(self.depth, 1),  # type: ignore[arg-type]
        )
        fns = [o for o in op.walk() if isinstance(o, func.FuncOp)]
        plans = [(fn, _plan(fn, self.tile_bytes, self.depth)) for fn in fns]
        for fn, todo in plans:
            if todo:
                layer_regions([r for r, _ in todo], {id(r): k for r, k in todo})
            for r in find_loop_regions(fn):
                if r.layered:
                    _stream_region(r, self.depth)
        prune_constants(op)
