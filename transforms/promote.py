"""`tapeflow-promote-scalars`: a scalar kept in a one-element local buffer (`double
acc[1]`, a `memref.alloca` of `memref<T>` or `memref<1xT>`) as SSA values, as LLVM's
`mem2reg` makes it a register before Enzyme runs.

A buffer is promoted when it is safe to: every use is a `memref.load` or `memref.store`
of its one element (the buffer is not passed anywhere, so nothing else reads or writes
it), those uses lie in the buffer's block or in `scf.for` loops nested in it (no
`scf.if`, no `scf.while` between them), and no load reads it before a store defined it
(a loop is entered with it defined). Each load is then the value last stored; a loop that
uses it carries it as one more iter_arg. A buffer that fails any condition stays as it
is. Only loads and stores disappear, so every computed value keeps its bits.

Then, as LLVM's LICM promotes a loop-invariant location to a register (`-O3`, before
Enzyme runs): one element of a local buffer (any `memref.alloca`) that an `scf.for`
with a constant trip count of at least 1 reads first and writes, every time at the same
indices defined outside the loop, with no other use of the buffer inside the loop (an
alloca aliases no other buffer, so nothing else reads or writes it), is loaded once
before the loop, carried as one more iter_arg and stored once after it
(`promote_in_loop`: `double act[10]; for j: act[i] += w[j] * x[j]`). Each load inside
is the value last stored, so again every computed value keeps its bits.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapeflow.transforms.analysis.constants import const_int, trip_count
from xdsl.context import Context
from xdsl.dialects import builtin, memref, scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


def _is_cell(alloca: memref.AllocaOp) -> bool:
    t = alloca.memref.type
    return isinstance(t, builtin.MemRefType) and list(t.get_shape()) in ([], [1])


def _access(op: Operation, cell: SSAValue) -> bool:
    """Whether `op` loads or stores the one element of `cell` (not storing `cell` itself)."""
    if isinstance(op, memref.LoadOp) and op.memref == cell:
        indices = op.indices
    elif isinstance(op, memref.StoreOp) and op.memref == cell and op.value != cell:
        indices = op.indices
    else:
        return False
    return all(const_int(i) == 0 for i in indices)


def _uses(op: Operation, cell: SSAValue) -> bool:
    return any(cell in o.operands for o in op.walk())


def _defined_after(block: Block, cell: SSAValue, defined: bool) -> bool | None:
    """Whether the cell is defined after `block` (entered `defined`); None when a load
    may read it undefined or a use is not a load, a store or inside an `scf.for`."""
    for op in block.ops:
        if isinstance(op, memref.LoadOp) and op.memref == cell:
            if not defined:
                return None
        elif isinstance(op, memref.StoreOp) and op.memref == cell:
            defined = True
        elif _uses(op, cell):
            if not isinstance(op, scf.ForOp) or not defined:
                return None
            if _defined_after(op.body.block, cell, True) is None:
                return None
    return defined


def _forward(block: Block, cell: SSAValue, value: SSAValue | None) -> SSAValue | None:
    """Replaces the cell's loads in `block` by the value last stored (`value` on entry);
    returns the value after `block`. (Every load and store of `cell` in `block` is of its
    one promoted element: a one-element buffer, or `promote_in_loop`'s checked element.)"""
    for op in list(block.ops):
        if isinstance(op, memref.LoadOp) and op.memref == cell:
            assert value is not None
            Rewriter.replace_op(op, [], [value])
        elif isinstance(op, memref.StoreOp) and op.memref == cell:
            value = op.value
            Rewriter.erase_op(op)
        elif isinstance(op, scf.ForOp) and _uses(op, cell):
            assert value is not None
            value = _carry(op, cell, value)
    return value


def _carry(loop: scf.ForOp, cell: SSAValue, value: SSAValue) -> SSAValue:
    """`loop` rebuilt with the cell's value as one more iter_arg; its value after it."""
    body = loop.body.block
    last = _forward(body, cell, body.insert_arg(value.type, len(body.args)))
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp) and last is not None
    yield_op.operands = (*yield_op.operands, last)
    region = loop.detach_region(loop.body)
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, value], region)
    new.location = loop.location
    new.attributes.update(loop.attributes)
    Rewriter.insert_op(new, InsertPoint.before(loop))
    Rewriter.replace_op(loop, [], new.results[:-1])
    return new.results[-1]


def promote(alloca: memref.AllocaOp) -> bool:
    """Promotes the buffer of `alloca` when it is safe (module doc); whether it did."""
    cell = alloca.memref
    block = alloca.parent_block()
    if block is None or not _is_cell(alloca):
        return False
    for use in cell.uses:
        if not _access(use.operation, cell):
            return False
        op = use.operation
        while op.parent_block() is not block:
            op = op.parent_op()
            if not isinstance(op, scf.ForOp):
                return False
    if _defined_after(block, cell, False) is None:
        return False
    _forward(block, cell, None)
    Rewriter.erase_op(alloca)
    return True


def promote_in_loop(loop: scf.ForOp, buffer: SSAValue) -> bool:
    """Carries the one element of local `buffer` that `loop` reads and writes through the
    loop as an iter_arg, loaded before it and stored after it, when it is safe (module
    doc); whether it did."""
    body = loop.body.block
    accesses = [u.operation for u in buffer.uses if loop.is_ancestor(u.operation)]
    owner = buffer.owner
    if not accesses or (trip_count(loop) or 0) < 1 or (
            isinstance(owner, Operation) and loop.is_ancestor(owner)):  # fmt: skip
        return False
    if any(o.parent_block() is not body or not isinstance(o, memref.LoadOp | memref.StoreOp)
           or (isinstance(o, memref.StoreOp) and o.value == buffer) for o in accesses):  # fmt: skip
        return False
    indices = tuple(accesses[0].indices)
    if any(tuple(o.indices) != indices for o in accesses) or any(
        loop.is_ancestor(i.owner) if isinstance(i.owner, Operation) else
        loop.body.block is i.owner for i in indices):  # fmt: skip
        return False
    first = min(accesses, key=body.get_operation_index)
    if not isinstance(first, memref.LoadOp) or not any(
            isinstance(o, memref.StoreOp) for o in accesses):  # fmt: skip
        return False
    before = memref.LoadOp.get(buffer, list(indices))
    before.location = first.location
    Rewriter.insert_op(before, InsertPoint.before(loop))
    after = _carry(loop, buffer, before.res)
    store = memref.StoreOp.get(after, buffer, list(indices))
    store.location = first.location
    carried = after.owner  # the rebuilt loop
    assert isinstance(carried, Operation)
    Rewriter.insert_op(store, InsertPoint.after(carried))
    return True


@dataclass(frozen=True)
class PromoteScalarsPass(ModulePass):
    """Local buffers' scalars as SSA values where safe: one-element buffers (mem2reg), then
    an element a loop reads and writes at invariant indices (LICM's scalar promotion)."""

    name = "tapeflow-promote-scalars"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for alloca in [o for o in op.walk() if isinstance(o, memref.AllocaOp)]:
            promote(alloca)
        allocas = [o for o in op.walk() if isinstance(o, memref.AllocaOp)]
        for alloca in allocas:
            # innermost loops first (a walk lists a loop before the loops inside it)
            loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
            for loop in reversed(loops):
                if loop.parent is not None:
                    promote_in_loop(loop, alloca.memref)
