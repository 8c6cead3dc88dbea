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
"""

from __future__ import annotations

from dataclasses import dataclass

from tapeflow.transforms.analysis.constants import const_int
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
    returns the value after `block`."""
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


@dataclass(frozen=True)
class PromoteScalarsPass(ModulePass):
    """One-element local buffers (memref<T>, memref<1xT> allocas) as SSA values where safe (mem2reg)."""

    name = "tapeflow-promote-scalars"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for alloca in [o for o in op.walk() if isinstance(o, memref.AllocaOp)]:
            promote(alloca)
