"""While regions: records of an `scf.while` whose trip count is known only when it ends.

`tapeflow-autodiff` gives every `scf.while` a trailing iteration counter (its `after`
block's last argument, its last result) and pushes the count after the loop; the reverse
sweep runs the `after` body's adjoint in an `scf.for %k = 0 to count` carrying the same
`tapeflow.loop` id. So a value pushed in the `after` block is pushed once per iteration and
popped once per reverse iteration: one record per iteration, the while loop being the
innermost level of a (ragged) nest whose inner trip count is the while's count.

Shape: the loops around the while (the *prefix*, outermost first, possibly none) are a
rectangular `tapeflow.loop` nest (as a ragged nest's prefix is), the while carries a
`tapeflow.loop` id and the values are pushed directly in its `after` block (a push in the
`before` block runs once more than the body and stays a cache).

Records and offsets
-------------------
The records of prefix iteration `o` (row-major) are `off[o] .. off[o+1]-1`, the forward
record index is `off[o] + iter` (`iter` the while's counter), the reverse one `off[o] +
count - 1 - k`, as in a ragged nest (`tapeflow.transforms.ragged`), whose index functions
the reverse sweep shares. The difference is when `off` is known: a ragged nest computes its
table before the forward sweep, but a while's count is known only when it ends, so the
forward sweep fills the table (`memref<(N_o + 1) x index>`, `off[0] = 0` stored before the
nest; after the while of iteration `o`, `off[o + 1] = off[o] + count`), and the tape cannot
be sized before it runs: it is *growable*. It is allocated with one record per prefix
iteration (16 with no prefix, as Enzyme's caches start), and each write is preceded by a
`region.reserve` of `index + 1` records, which doubles the tape when it is full (the
records written stay), as Enzyme's caches under an `scf.while` grow. Without a prefix the
offset is 0 and there is no table.

Such a tape carries `tapeflow.growable` (and `tapeflow.dram` when the cost model keeps it
in DRAM). Layered (`tapeflow-layers`), its reverse runs are cut into pieces at tile
boundaries, as a ragged region's; streamed (`tapeflow-stream`), the forward sweep cuts its
tiles as the while runs and grows its FIFO (`stream.fifo_reserve`) the same way.
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tapeflow.transforms.analysis.constants import const_int
from tapeflow.transforms.index_utils import IndexBuilder, loop_id, offset_level_index

GROWABLE_ATTR = "tapeflow.growable"
"""Unit attribute on the `region.alloc` of a while region (its count is a first size; what
grows it is `region.reserve`), for the reader and the passes after."""

FIRST_CAPACITY = 16
"""Records a while region's tape starts with when no loop is around the while."""


def counted_while(op: Operation) -> scf.WhileOp | None:
    """The `scf.while` (with a `tapeflow.loop` id) whose `after` block directly holds `op`."""
    parent = op.parent_op()
    if not isinstance(parent, scf.WhileOp) or loop_id(parent) is None:
        return None
    if op.parent_block() is not parent.after_region.block:
        return None
    return parent


def _store(value: SSAValue, table: SSAValue, index: SSAValue, point: InsertPoint) -> None:
    Rewriter.insert_op(memref.StoreOp.get(value, table, [index]), point)


def offsets_cell(count: SSAValue, anchor: Operation) -> SSAValue:
    """Allocates, before `anchor` (the nest's outermost loop), the offsets table of a while
    region with `count` prefix iterations, with `off[0] = 0`."""
    ib = IndexBuilder(InsertPoint.before(anchor))
    static = const_int(count)
    if static is not None:
        table = memref.AllocOp.get(IndexType(), shape=[static + 1])
    else:
        size = ib.add(count, ib.const(1))
        table = memref.AllocOp.get(IndexType(), shape=[DYNAMIC_INDEX], dynamic_sizes=[size])
    Rewriter.insert_op(table, InsertPoint.before(anchor))
    c0 = ib.const(0)
    _store(c0, table.memref, c0, InsertPoint.before(anchor))
    return table.memref


def forward_index(loop: scf.WhileOp, table: SSAValue | None, o: SSAValue | None) -> SSAValue:
    """The record index `off[o] + iter` in `loop`'s `after` block (its first op), with
    `off[o + 1] = off[o] + count` stored right after `loop` (`o`: the prefix iteration's
    row-major index, defined before `loop`; no table: the offset is 0)."""
    counter = loop.after_region.block.args[-1]
    if table is None or o is None:
        return counter
    ib = IndexBuilder(InsertPoint.before(loop))
    base = memref.LoadOp.get(table, [o])
    Rewriter.insert_op(base, InsertPoint.before(loop))
    after = IndexBuilder(InsertPoint.after(loop))
    _store(after.add(base.res, loop.res[-1]), table, after.add(o, ib.const(1)), after.point)
    index = arith.AddiOp(base.res, counter)
    Rewriter.insert_op(index, InsertPoint.at_start(loop.after_region.block))
    return index.result


def reverse_index(loop: scf.ForOp, ib: IndexBuilder) -> SSAValue:
    """The record index in the reverse loop of a while with no loop around it: `count - 1 -
    k` for the counter `k` of `loop` (`scf.for %k = 0 to count`)."""
    size = IndexBuilder(InsertPoint.before(loop)).trip_count(loop)
    return offset_level_index(ib.const(0), loop, size, True)


def record_total(write: Operation, loop: scf.WhileOp, point: InsertPoint) -> SSAValue:
    """The number of records a while region wrote (`write` in `loop`'s body, built by
    `forward_index`), computed at `point` (after the forward nest): the while's count
    alone, else `off[N_o]` of its offsets table."""
    index = write.operands[1]
    if index is loop.after_region.block.args[-1]:
        return loop.res[-1]
    assert isinstance(index.owner, arith.AddiOp)
    base = index.owner.lhs.owner
    assert isinstance(base, memref.LoadOp)
    table = base.memref
    alloc = table.owner
    assert isinstance(alloc, memref.AllocOp)
    ib = IndexBuilder(point)
    shape = alloc.memref.type.get_shape()  # type: ignore[attr-defined]
    size = alloc.dynamic_sizes[0] if shape[0] == DYNAMIC_INDEX else ib.const(shape[0])
    last = memref.LoadOp.get(table, [ib.sub(size, ib.const(1))])
    Rewriter.insert_op(last, point)
    return last.res
