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

Before the reverse sweep, a prologue prefetches the last `D` tiles (`T-1 ... T-D`, those
that exist) into their buffers. So while the reverse sweep works on tile `g`, tiles
`g-1 ... g-D+1` are already in flight, and each acquire waits only right before the tile's
first use. `D = 1` gives no overlap (each tile is fetched after the previous one is
released); `D >= 2` overlaps DMA with compute in both sweeps. In the forward sweep a
buffer's commit is waited for when the buffer is next acquired, `D` tiles later; the last
`D` commits are waited for right after they are issued, so every DMA has completed before
the reverse sweep prefetches, and every token is waited on exactly once. A partial last
tile (the trip count not a multiple of `K`) is committed whole; only its written records
are read back.

Regions that are not layered are strip-mined first with tiles of
`floor(tile-bytes / record size)` records (so `tapeflow-regions,tapeflow-stream{tile-bytes=..}`
works on its own). For a layered region `tile-bytes`, when given, must hold one layer's
tile, and `D` buffers must fit the scratchpad bytes `tapeflow-layers` granted the region.
Straight-line regions (one record) stay in DRAM.

Options: `tile-bytes` (>= 0; 0 = the layer's tile), `depth` (>= 1, default 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func, scf
from xdsl.dialects.arith import CmpiOp, RemSIOp, SelectOp
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.dialects import region, stream
from tapeflow.transforms.index_utils import IndexBuilder, const_int, erase_dead
from tapeflow.transforms.layers import (
    LAYER_ATTR,
    SPM_BYTES_ATTR,
    LoopRegion,
    check_options,
    find_loop_regions,
    layer_regions,
)


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


def _outer_index(eb: _Emitter, loops: list[scf.ForOp], sizes: list[SSAValue], rev: bool):
    if not loops:
        return eb.const(0)
    if rev:
        idx = [eb.sub(eb.sub(n, eb.const(1)), eb.normalized_iv(lp)) for lp, n in zip(loops, sizes)]
    else:
        idx = [eb.normalized_iv(lp) for lp in loops]
    return eb.linearize(idx, sizes)


def _stream_region(r: LoopRegion, depth: int) -> None:
    k = _layer_records(r)
    record = region.record_of(r.alloc.tape)
    fifo_type = stream.FifoType(record, k)
    spm_type = region.TapeType(record, stream.SpmAttr())
    outer_f, fl, ft = r.fwd[:-2], r.fwd[-2], r.fwd[-1]
    outer_r, rl, rt = r.rev[:-2], r.rev[-2], r.rev[-1]

    # FIFO and buffers, before the outermost forward loop.
    eb = _Emitter(InsertPoint.before(r.fwd[0]))
    sizes = [eb.trip_count(lp) for lp in outer_f]
    nl = fl.ub
    total = nl
    for s in sizes:
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
    g = fb.add(fb.mul(_outer_index(fb, outer_f, sizes, False), nl), fb.normalized_iv(fl))
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

    # Reverse prologue: prefetch the last `depth` tiles.
    pb = _Emitter(InsertPoint.before(r.rev[0]))
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
    g = rb.add(rb.mul(_outer_index(rb, outer_r, sizes, True), nl), j)
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
