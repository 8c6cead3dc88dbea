"""`tapeflow-stream{tile-bytes=T depth=D}`: stream layer tiles through the scratchpad by DMA.

Input: layered regions (`tapeflow-layers`), i.e. a DRAM `region.alloc` whose single
`region.write` sits in a tile loop inside a layer loop (`tapeflow.layer = L`) of the
forward sweep, directly or inside the loops the layer spans (`tapeflow.layer_span`), and
whose single `region.read` sits likewise in the reverse sweep. Each layer's `K` records
(`tapeflow.layer_records`) form one *tile*; a record sits at its row-major position in the
tile (tile-loop iteration, then the spanned loops'). The pass replaces the DRAM tape by a
`!stream.fifo<R, K>` of `T` tile slots in DRAM (`T` = product of the trip counts of the
loops around the layer loop x the number of layers; slot `g = outer * nl + j` for layer
`j` of outer iteration `outer`) and `D` scratchpad buffers `!region.tape<R, #stream.spm>`
of `K` records; tile `g` uses buffer `g mod D` (an `arith.select` over the buffers).

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
token is waited on exactly once. A partial tile (the strip-mined loop's trip count not a
multiple of its layer size, or known only at run time) commits and prefetches only its
filled part: the DMAs get the record count `min(L, n - j*L) * P` of layer `j`.

Regions that are not layered are strip-mined first (as `tapeflow-layers` does, spanning
loops where they fit) with tiles of at most `floor(tile-bytes / record size)` records
(so `tapeflow-regions,tapeflow-stream{tile-bytes=..}` works on its own). For a layered
region `tile-bytes`, when given, must hold one layer's tile, and `D` buffers must fit the
scratchpad bytes `tapeflow-layers` granted the region. Straight-line regions (one record)
stay in DRAM.

A ragged region (`tapeflow.ragged`: layers of records, `tapeflow-layers`) has `T =
ceil(total / K)` tiles of `K` consecutive records; each piece of an innermost run (records
`s .. e-1`, in tile `t = s / K`) writes record `r` at `r - tK` of buffer `t mod D`, and
the tile's DMA fences sit where its first and last records are: forward, acquire when
`s = tK`, commit (`e - tK` records) when `e = min(tK + K, total)`; reverse, acquire when
`e` is that end, release and prefetch tile `t - D` when `s = tK`. The prologue prefetches
the last `D` tiles, as above.

A while region (`tapeflow.growable`) has the same tiles, but its record count is known only
once its forward nest is over: its FIFO starts with `ceil(first size / K)` slots and grows
(`stream.fifo_reserve`) as the forward sweep opens each tile, in the while's body (acquire
at the tile's first record, commit at its last); after the nest, the last tile, if partial,
is committed with its records, every buffer is drained (`acquire_write`, which waits for
its last commit, then `release`) and the last `D` tiles are prefetched; the reverse sweep
is a ragged region's.

Options: `tile-bytes` (>= 0; 0 = the layer's tile), `depth` (>= 1, default 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tapeflow.dialects import region, stream
from tapeflow.transforms.analysis.constants import const_int
from tapeflow.transforms.index_utils import (
    IndexBuilder,
    check_steps,
    erase_dead,
    nest_level_index,
    prune_constants,
)
from tapeflow.transforms.ragged import shifted, value_at
from tapeflow.transforms.while_regions import record_total
from tapeflow.transforms.layers import (
    LAYER_ATTR,
    SPM_BYTES_ATTR,
    LoopRegion,
    find_loop_regions,
    layer_regions,
)
from tapeflow.transforms.options import DEFAULT_DEPTH, check_options
from xdsl.context import Context
from xdsl.dialects import builtin, func, scf
from xdsl.dialects.arith import CmpiOp, RemSIOp, SelectOp
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error


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

    def remv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a mod b for a >= 0, b > 0 (both SSA values)."""
        cb = const_int(b)
        if cb is not None:
            return self.rem(a, cb)
        return self._insert(RemSIOp(a, b))

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


@dataclass
class _Level:
    """One loop of the original program around a region: a plain loop, or a layer loop
    and its tile loop (an outer region strip-mined by `tapeflow-layers`)."""

    loops: list[scf.ForOp]
    size: SSAValue
    """The original trip count."""
    last_start: SSAValue | None = None
    """For a strip-mined loop: the first iteration of its last layer, (nl - 1) * L."""


def _levels(pairs: list[list[scf.ForOp]], anchor: _Emitter) -> list[_Level]:
    """The forward loops of the original program (`_pair`) with their sizes, computed by
    `anchor` (before the outermost loop, where every bound is defined)."""
    levels: list[_Level] = []
    for loops in pairs:
        if len(loops) == 2:
            n = loops[0].ub
            size_l = loops[0].step
            nl = anchor.ceildiv(n, size_l)
            last_start = anchor.mul(anchor.sub(nl, anchor.const(1)), size_l)
            levels.append(_Level(loops, n, last_start))
        else:
            levels.append(_Level(loops, anchor.trip_count(loops[0])))
    return levels


def _layer_size(layer: scf.ForOp) -> int:
    attr = layer.attributes[LAYER_ATTR]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def _reverse_within(eb: IndexBuilder, tile: scf.ForOp) -> SSAValue:
    """Position in its layer of the primal iteration a reverse tile loop's counter `k`
    stands for: the counter runs `n-end ... n-start-1`, i.e. primal `end-1 ... start`, so
    the position is `(ub - k) / step - 1`."""
    k = tile.body.block.args[0]
    return eb.sub(eb.div(eb.sub(tile.ub, k), tile.step), eb.const(1))


def _linear_index(
    levels: list[_Level], rev: bool, index: SSAValue | None = None
) -> SSAValue | None:
    """Linear index of the current iteration of `levels` (row-major, after `index` when
    given), built level by level at the top of each level's innermost body; for a reverse
    nest, of the primal iteration it stands for."""
    for level in levels:
        if level.last_start is None:
            index = nest_level_index(index, level.loops[0], level.size, rev)
            continue
        layer, tile = level.loops
        eb = _Emitter(InsertPoint.at_start(tile.body.block))
        if rev:
            start = eb.sub(level.last_start, layer.body.block.args[0])
            it = eb.add(start, _reverse_within(eb, tile))
        else:
            it = eb.add(layer.body.block.args[0], eb.normalized_iv(tile))
        index = it if index is None else eb.add(eb.mul(index, level.size), it)
    return index


def _pair(chain: list[scf.ForOp]) -> list[list[scf.ForOp]]:
    """`chain` in original loops: a layer loop with its tile loop, or a plain loop."""
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
    k = r.tile_records
    record = region.record_of(r.alloc.tape)
    fifo_type = stream.FifoType(record, k)
    spm_type = region.TapeType(record, stream.SpmAttr())
    pairs_f, pairs_r = _pair(r.fwd), _pair(r.rev)
    own = len(pairs_f) - 1 - r.span
    if [len(p) for p in pairs_r] != [len(p) for p in pairs_f] or own < 0 or len(
        pairs_f[own]
    ) != 2:
        raise PassFailedException(
            op_error(r.alloc, "forward and reverse loop nests of the region do not match")
        )
    fl, ft = pairs_f[own]
    rl, rt = pairs_r[own]

    # FIFO and buffers, before the outermost forward loop. A tile is one layer of the
    # strip-mined loop `own`, with every iteration of the loops inside it (inner levels).
    eb = _Emitter(InsertPoint.before(r.fwd[0]))
    levels_f = _levels(pairs_f, eb)
    levels_r = [
        _Level(loops_r, lv.size, lv.last_start) for loops_r, lv in zip(pairs_r, levels_f)
    ]
    nl = eb.ceildiv(fl.ub, fl.step)
    total = nl
    for lv in levels_f[:own]:
        total = eb.mul(total, lv.size)
    ct = const_int(total)
    fifo = stream.FifoAllocOp(fifo_type, ct if ct is not None and ct >= 1 else total)
    eb.op(fifo)
    buffers = [eb.op(region.AllocOp(spm_type, k)).results[0] for _ in range(depth)]
    tail = eb.sub(total, eb.const(depth))
    c0 = eb.const(0)
    d_const = eb.const(depth)
    c1 = eb.const(1)
    last = eb.sub(total, c1)

    # A partial tile (the trip count `n` of the strip-mined loop not a multiple of its
    # layer size, or known only at run time) commits and prefetches only its filled part:
    # min(L, n - j * L) iterations of `per_iteration` records for layer j = g mod nl.
    per_iteration = k // _layer_size(fl)
    cn, cl = const_int(fl.ub), const_int(fl.step)
    partial = cn is None or cl is None or cn % cl != 0

    def filled(e: _Emitter, start: SSAValue | None, g_: SSAValue | None) -> SSAValue | None:
        """Records of the tile whose layer starts at iteration `start` (or of tile `g_`)."""
        if not partial:
            return None
        if start is None:
            assert g_ is not None
            start = e.mul(g_ if own == 0 else e.remv(g_, nl), fl.step)
        left = e.min(fl.step, e.sub(fl.ub, start))
        return e.mul(left, e.const(per_iteration))

    # Forward: acquire before the tile loop, write into the buffer, commit after it.
    fb = _Emitter(InsertPoint.before(ft))
    outer = _linear_index(levels_f[:own], False)
    j = fb.normalized_iv(fl)
    g = j if outer is None else fb.add(fb.mul(outer, nl), j)
    buf = fb.buffer(g, buffers)
    fb.op(stream.AcquireWriteOp(buf))
    tb = _Emitter(InsertPoint.at_start(ft.body.block))
    windex = _linear_index(levels_f[own + 1 :], False, tb.normalized_iv(ft))
    assert windex is not None
    wb = _Emitter(InsertPoint.before(r.write))
    wb.op(region.WriteOp(buf, windex, list(r.write.values)))
    replaced = [r.write.index]
    Rewriter.erase_op(r.write)
    cb = _Emitter(InsertPoint.after(ft))
    commit = stream.CommitOp(fifo.fifo, g, buf, filled(cb, fl.body.block.args[0], None))
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
                pb.op(stream.PrefetchOp(fifo.fifo, tile, buffers[ctile % depth],
                                        filled(pb, None, tile)))  # fmt: skip
            continue
        cond = pb.cmp(tile, c0, "sge")
        block = Block()
        inner = _Emitter(InsertPoint.at_end(block))
        inner.op(stream.PrefetchOp(fifo.fifo, tile, inner.buffer(tile, buffers),
                                   filled(inner, None, tile)))  # fmt: skip
        inner.op(scf.YieldOp())
        pb.op(scf.IfOp(cond, [], [block]))

    # Reverse: acquire before the tile loop, read from the buffer, release and prefetch after.
    rb = _Emitter(InsertPoint.before(rt))
    j = rb.sub(rb.sub(nl, c1), rb.normalized_iv(rl))
    outer = _linear_index(levels_r[:own], True)
    g = j if outer is None else rb.add(rb.mul(outer, nl), j)
    buf = rb.buffer(g, buffers)
    rb.op(stream.AcquireReadOp(buf))
    tb_r = _Emitter(InsertPoint.at_start(rt.body.block))
    if const_int(rt.step) == 1:
        within = tb_r.sub(rb.sub(rt.ub, c1), rt.body.block.args[0])
    else:
        within = _reverse_within(tb_r, rt)
    rindex = _linear_index(levels_r[own + 1 :], True, within)
    assert rindex is not None
    ib = _Emitter(InsertPoint.before(r.read))
    new_read = region.ReadOp(buf, rindex)
    ib.op(new_read)
    for old, new in zip(r.read.values, new_read.values):
        old.replace_all_uses_with(new)
    replaced.append(r.read.index)
    Rewriter.erase_op(r.read)
    ab = _Emitter(InsertPoint.after(rt))
    ab.op(stream.ReleaseOp(buf))
    nxt = ab.sub(g, d_const)
    if partial:
        # The count is computed under the guard, where `nxt` is a valid tile.
        block = Block()
        inner = _Emitter(InsertPoint.at_end(block))
        inner.op(stream.PrefetchOp(fifo.fifo, nxt, buf, filled(inner, None, nxt)))
        inner.op(scf.YieldOp())
        ab.op(scf.IfOp(ab.cmp(g, d_const, "sge"), [], [block]))
    else:
        ab.guarded(g, d_const, [stream.PrefetchOp(fifo.fifo, nxt, buf)])

    # Release everything where the DRAM tape was released.
    _release(r, fifo, buffers)
    # The old record indices die only now: the builders above hold values (hoisted
    # constants, loop bounds) that those indices may share and that they use only later,
    # so erasing them earlier could leave an op using an erased value.
    for value in replaced:
        erase_dead(value)
    for e in (eb, fb, tb, wb, cb, pb, rb, tb_r, ib, ab):
        e.prune()


def _piece(
    tile: scf.ForOp, first: SSAValue, reverse: bool, size: SSAValue, total: SSAValue,
    buffers: list[SSAValue],
) -> tuple[_Emitter, SSAValue, SSAValue, SSAValue, SSAValue, SSAValue, SSAValue]:
    """Before the piece `tile` of a layered ragged region (tiles of `size` records, `total`
    in all), whose first (forward) or last (reverse) record is `first` at its first
    iteration: its emitter, first record, end, tile, tile start, buffer and tile end."""
    pb = _Emitter(InsertPoint.before(tile))
    at = value_at(first, tile, tile.lb, pb)
    n = pb.trip_count(tile)
    start = pb.sub(pb.add(at, pb.const(1)), n) if reverse else at
    end = pb.add(start, n)
    t = pb.div(start, size)
    tk = pb.mul(t, size)
    return pb, start, end, t, tk, pb.buffer(t, buffers), pb.min(pb.add(tk, size), total)


def _prologue(
    pro: _Emitter, fifo: stream.FifoAllocOp, buffers: list[SSAValue], tiles: SSAValue,
    filled: Callable[[_Emitter, SSAValue], SSAValue | None],
) -> list[_Emitter]:
    """Prefetches the last `len(buffers)` tiles (those that exist) once the forward nest
    is over; returns the emitters made."""
    made = []
    for d in range(len(buffers)):
        g = pro.sub(tiles, pro.const(d + 1))
        cg = const_int(g)
        if cg is not None:
            if cg >= 0:
                pro.op(stream.PrefetchOp(fifo.fifo, g, buffers[cg % len(buffers)],
                                         filled(pro, g)))  # fmt: skip
            continue
        block = Block()
        inner = _Emitter(InsertPoint.at_end(block))
        inner.op(stream.PrefetchOp(fifo.fifo, g, inner.buffer(g, buffers), filled(inner, g)))
        inner.op(scf.YieldOp())
        pro.op(scf.IfOp(pro.cmp(g, pro.const(0), "sge"), [], [block]))
        made.append(inner)
    return made


def _reverse_pieces(
    r: LoopRegion, fifo: stream.FifoAllocOp, buffers: list[SSAValue], size: SSAValue,
    total: SSAValue, replaced: list[SSAValue],
) -> list[_Emitter]:
    """The reverse sweep of a layered ragged (or while) region: each piece acquires its
    tile's buffer at the tile's last record, reads at the record's place, and releases
    it (prefetching tile `t - D` into it) at the tile's first record."""
    rt = r.rev[-1]
    d_const = _Emitter(InsertPoint.before(rt)).const(len(buffers))
    rb, start, end, t, tk, buf, tile_end = _piece(rt, r.read.index, True, size, total, buffers)
    rb.guarded(end, tile_end, [stream.AcquireReadOp(buf)])
    read = region.ReadOp(buf, shifted(r.read.index, rt, tk, r.read))
    Rewriter.insert_op(read, InsertPoint.before(r.read))
    for old, new in zip(r.read.values, read.values):
        old.replace_all_uses_with(new)
    replaced.append(r.read.index)
    Rewriter.erase_op(r.read)
    block = Block()
    inner = _Emitter(InsertPoint.at_end(block))
    inner.op(stream.ReleaseOp(buf))
    inner.guarded(t, d_const, [stream.PrefetchOp(fifo.fifo, inner.sub(t, d_const), buf)])
    inner.op(scf.YieldOp())
    ab = _Emitter(InsertPoint.after(rt))
    ab.op(scf.IfOp(ab.cmp(tk, start, "sge"), [], [block]))
    return [rb, inner, ab]


def _stream_ragged(r: LoopRegion, depth: int) -> None:
    """Streams a layered ragged region: tile `t` holds records `t K .. t K + K - 1`, and
    each piece of an innermost run (`tapeflow-layers`) lies in one tile. A piece of records
    `s .. e-1` of tile `t = s / K`: forward, acquires the tile's buffer when `s = t K` and
    commits it when `e = min(t K + K, total)`; reverse, acquires it when `e` is that end
    and releases it (prefetching tile `t - D` into it) when `s = t K`."""
    k = r.tile_records
    record = region.record_of(r.alloc.tape)
    eb = _Emitter(InsertPoint.before(r.fwd[0]))
    count = r.alloc.static_count
    total = eb.const(count) if count is not None else r.alloc.dynamic_count
    assert total is not None
    size = eb.const(k)
    tiles = eb.ceildiv(total, size)
    ct = const_int(tiles)
    fifo_type = stream.FifoType(record, k)
    fifo = stream.FifoAllocOp(fifo_type, ct if ct is not None and ct >= 1 else tiles)
    eb.op(fifo)
    spm_type = region.TapeType(record, stream.SpmAttr())
    buffers = [eb.op(region.AllocOp(spm_type, k)).results[0] for _ in range(depth)]
    d_const = eb.const(depth)
    tail = eb.sub(tiles, d_const)
    partial = count is None or count % k != 0

    def filled(e: _Emitter, g: SSAValue) -> SSAValue | None:
        """Records of tile `g`: all `K` but in the last tile of a partial tape."""
        return e.min(size, e.sub(total, e.mul(g, size))) if partial else None

    # Forward: acquire at the tile's first record, write at its place, commit at its last.
    ft = r.fwd[-1]
    pb, start, end, t, tk, buf, tile_end = _piece(ft, r.write.index, False, size, total, buffers)
    pb.guarded(tk, start, [stream.AcquireWriteOp(buf)])
    write = region.WriteOp(buf, shifted(r.write.index, ft, tk, r.write), list(r.write.values))
    Rewriter.insert_op(write, InsertPoint.before(r.write))
    replaced = [r.write.index]
    Rewriter.erase_op(r.write)
    block = Block()
    cb = _Emitter(InsertPoint.at_end(block))
    commit = stream.CommitOp(fifo.fifo, t, buf, cb.sub(end, tk) if partial else None)
    cb.op(commit)
    cb.guarded(t, tail, [stream.WaitOp(commit.token)])
    cb.op(scf.YieldOp())
    ab = _Emitter(InsertPoint.after(ft))
    ab.op(scf.IfOp(ab.cmp(end, tile_end, "sge"), [], [block]))
    emitters = [eb, pb, cb, ab]

    # Reverse prologue: prefetch the last `depth` tiles once the forward nest is over.
    pro = _Emitter(InsertPoint.after(r.fwd[0]))
    emitters += _prologue(pro, fifo, buffers, tiles, filled)
    emitters.append(pro)

    # Reverse: acquire at the tile's last record, release (and refill) at its first.
    emitters += _reverse_pieces(r, fifo, buffers, size, total, replaced)
    _finish(r, fifo, buffers, replaced, emitters)


def _stream_while(r: LoopRegion, depth: int) -> None:
    """Streams a layered while region (`while_regions`): tile `t` holds records `t K ..
    t K + K - 1`, as a ragged region's, but the forward sweep learns its records one
    iteration at a time, so it cuts its tiles as it runs. At record `r` (tile `t = r / K`):
    when `r = t K`, the FIFO grows to hold tile `t` (`stream.fifo_reserve`) and the
    tile's buffer is acquired; when `r = t K + K - 1`, the tile is committed. After the
    forward nest the record count is known: the last tile, if partial, is committed with
    its records, every buffer is drained (acquired, so its last commit is waited for, and
    released), and the last `D` tiles are prefetched. The reverse loop was cut into pieces
    by `tapeflow-layers`, as a ragged region's: its reverse sweep is theirs."""
    assert r.while_op is not None
    k = r.tile_records
    record = region.record_of(r.alloc.tape)
    anchor = r.fwd[0] if r.fwd else r.while_op
    eb = _Emitter(InsertPoint.before(anchor))
    count = r.alloc.static_count
    first = eb.const(count) if count is not None else r.alloc.dynamic_count
    assert first is not None
    size = eb.const(k)
    slots = eb.max(eb.ceildiv(first, size), eb.const(1))
    fifo = stream.FifoAllocOp(stream.FifoType(record, k), const_int(slots) or slots)
    eb.op(fifo)
    spm_type = region.TapeType(record, stream.SpmAttr())
    buffers = [eb.op(region.AllocOp(spm_type, k)).results[0] for _ in range(depth)]

    # Forward, at each record: open its tile at its first record, close it at its last.
    index = r.write.index
    wb = _Emitter(InsertPoint.before(r.write))
    t = wb.div(index, size)
    within = wb.sub(index, wb.mul(t, size))
    buf = wb.buffer(t, buffers)
    block = Block()
    ob = _Emitter(InsertPoint.at_end(block))
    ob.op(stream.FifoReserveOp(fifo.fifo, ob.add(t, ob.const(1))))
    ob.op(stream.AcquireWriteOp(buf))
    ob.op(scf.YieldOp())
    wb.op(scf.IfOp(wb.cmp(within, wb.const(0), "eq"), [], [block]))
    wb.op(region.WriteOp(buf, within, list(r.write.values)))
    block = Block()
    cb = _Emitter(InsertPoint.at_end(block))
    cb.op(stream.CommitOp(fifo.fifo, t, buf))
    cb.op(scf.YieldOp())
    wb.op(scf.IfOp(wb.cmp(within, wb.const(k - 1), "eq"), [], [block]))
    for use in list(r.alloc.tape.uses):
        if isinstance(use.operation, region.ReserveOp):
            need = use.operation.count
            Rewriter.erase_op(use.operation)
            erase_dead(need)
    Rewriter.erase_op(r.write)

    # After the forward nest: the last, partial tile; the drain; the prologue.
    pro = _Emitter(InsertPoint.after(anchor))
    total = record_total(r.write, r.while_op, pro.point)
    last = pro.div(total, size)
    rest = pro.sub(total, pro.mul(last, size))
    block = Block()
    lb_ = _Emitter(InsertPoint.at_end(block))
    lb_.op(stream.CommitOp(fifo.fifo, last, lb_.buffer(last, buffers), rest))
    lb_.op(scf.YieldOp())
    pro.op(scf.IfOp(pro.cmp(rest, pro.const(0), "sgt"), [], [block]))
    for b in buffers:
        pro.op(stream.AcquireWriteOp(b))
        pro.op(stream.ReleaseOp(b))
    tiles = pro.ceildiv(total, size)

    def filled(e: _Emitter, g: SSAValue) -> SSAValue:
        return e.min(size, e.sub(total, e.mul(g, size)))

    emitters = [eb, wb, ob, cb, lb_, *_prologue(pro, fifo, buffers, tiles, filled), pro]
    replaced = [index]
    emitters += _reverse_pieces(r, fifo, buffers, size, total, replaced)
    _finish(r, fifo, buffers, replaced, emitters)


def _finish(
    r: LoopRegion, fifo: stream.FifoAllocOp, buffers: list[SSAValue], replaced: list[SSAValue],
    emitters: list[_Emitter],
) -> None:
    """Releases the FIFO and buffers (`_release`), then erases the old record indices and
    the builders' unused ops: only now, as the builders hold values those indices share."""
    _release(r, fifo, buffers)
    for value in replaced:
        erase_dead(value)
    for e in emitters:
        e.prune()


def _release(r: LoopRegion, fifo: stream.FifoAllocOp, buffers: list[SSAValue]) -> None:
    """Releases the FIFO and buffers where the DRAM tape was released, and erases it."""
    for use in list(r.alloc.tape.uses):
        dealloc = use.operation
        assert isinstance(dealloc, region.DeallocOp)
        db = _Emitter(InsertPoint.before(dealloc))
        db.op(stream.FifoDeallocOp(fifo.fifo))
        for b in buffers:
            db.op(region.DeallocOp(b))
        Rewriter.erase_op(dealloc)
    Rewriter.erase_op(r.alloc)


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
        k = r.tile_records
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
    depth: int = DEFAULT_DEPTH

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        check_options(
            self.name,
            tile_bytes=(self.tile_bytes, 0),
            depth=(self.depth, 1),
        )
        check_steps(op)
        fns = [o for o in op.walk() if isinstance(o, func.FuncOp)]
        plans = [(fn, _plan(fn, self.tile_bytes, self.depth)) for fn in fns]
        for fn, todo in plans:
            if todo:
                layer_regions([r for r, _ in todo], {id(r): k for r, k in todo})
            for r in find_loop_regions(fn):
                if r.layered:
                    if r.while_op is not None:
                        _stream_while(r, self.depth)
                    else:
                        (_stream_ragged if r.ragged else _stream_region)(r, self.depth)
        prune_constants(op)
