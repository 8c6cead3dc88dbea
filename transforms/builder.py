"""`At`: builds ops before a fixed insertion point, as emitted (no folding, no hoisting),
and the pieces of Enzyme's growable stack (`alloc_growable`, `push_growable`, `pop_index`).

Shared by the tape lowerings (`tapeflow-lower-tape`, `tapeflow-lower-to-std`). For index
arithmetic that folds constants and hoists them, use `index_utils.IndexBuilder`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, cf, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, MemRefType, UnitAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tapeflow.diagnostics import op_error


class At:
    """Inserts ops before a fixed point and returns their results.

    `alloc_role`, when given, is the name of a unit attribute set on every `memref.alloc`
    this builder emits (unless the call names another `role`); a load or store carries
    the unit attribute its call names (`role`)."""

    def __init__(self, point: InsertPoint, alloc_role: str | None = None):
        self.point = point
        self.alloc_role = alloc_role

    def op(self, op: Operation) -> Operation:
        Rewriter.insert_op(op, self.point)
        return op

    def val(self, op: Operation) -> SSAValue:
        return self.op(op).results[0]

    def index(self, value: int) -> SSAValue:
        return self.val(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def alloc(self, element: Attribute, shape: Sequence[int],
              dynamic: Sequence[SSAValue] = (), role: str | None = None) -> SSAValue:
        op = memref.AllocOp.get(element, shape=list(shape), dynamic_sizes=dynamic)
        role = self.alloc_role if role is None else role
        if role is not None:
            op.attributes[role] = UnitAttr()
        return self.val(op)

    def load(self, ref: SSAValue, indices: Sequence[SSAValue] = (),
             role: str | None = None) -> SSAValue:
        return self.val(_marked(memref.LoadOp.get(ref, list(indices)), role))

    def store(self, value: SSAValue, ref: SSAValue, indices: Sequence[SSAValue] = (),
              role: str | None = None) -> None:
        self.op(_marked(memref.StoreOp.get(value, ref, list(indices)), role))


def _marked(op: Operation, role: str | None) -> Operation:
    if role is not None:
        op.attributes[role] = UnitAttr()
    return op


def alloc_growable(at: At, element: Attribute, initial: int,
                   meta_role: str | None = None) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Allocates an empty growable stack of `element`s and returns its `slot`
    (`memref<memref<?xT>>`, holding an elements buffer of `initial` elements), `size` and
    `capacity` (`memref<index>`). The elements buffer's alloc carries `at`'s `alloc_role`,
    the three others `meta_role` (else `at`'s `alloc_role` too)."""
    slot = at.alloc(MemRefType(element, [DYNAMIC_INDEX]), [], role=meta_role)
    size = at.alloc(IndexType(), [], role=meta_role)
    capacity = at.alloc(IndexType(), [], role=meta_role)
    first = at.index(initial)
    at.store(at.alloc(element, [DYNAMIC_INDEX], [first]), slot)
    at.store(at.index(0), size)
    at.store(first, capacity)
    return slot, size, capacity


def push_growable(at: At, value: SSAValue, slot: SSAValue, size: SSAValue,
                  capacity: SSAValue, element: Attribute, role: str | None = None) -> None:
    """Pushes `value` on Enzyme's growable stack: `slot` (`memref<memref<?xT>>`) holds the
    elements buffer, `size` and `capacity` (`memref<index>`) its fill and length. A full
    buffer is first replaced by one twice as long (alloc, copy loop, dealloc of the old
    one); that alloc carries `at`'s `alloc_role`, the store of `value` the attribute
    `role` names (if any)."""
    n = at.load(size)
    cap = at.load(capacity)
    full = at.val(arith.CmpiOp(n, cap, "sge"))
    grow = Block()
    g = At(InsertPoint.at_end(grow), at.alloc_role)
    new_cap = g.val(arith.MuliOp(cap, g.index(2)))
    old = g.load(slot)
    new = g.alloc(element, [DYNAMIC_INDEX], [new_cap])
    copy = Block(arg_types=[IndexType()])
    c = At(InsertPoint.at_end(copy))
    c.store(c.load(old, [copy.args[0]]), new, [copy.args[0]])
    c.op(scf.YieldOp())
    g.op(scf.ForOp(g.index(0), n, g.index(1), [], copy))
    g.op(memref.DeallocOp.get(old))
    g.store(new, slot)
    g.store(new_cap, capacity)
    g.op(scf.YieldOp())
    at.op(scf.IfOp(full, [], [grow]))
    at.store(value, at.load(slot), [n], role)
    at.store(at.val(arith.AddiOp(n, at.index(1))), size)


def pop_index(at: At, size: SSAValue, pop: Operation, check: bool) -> SSAValue:
    """Decrements the stack size held in `size` (a `memref<index>`) and returns the new
    size, the index of the value `pop` takes. With `check`, first asserts that the stack is
    not empty ("pop on empty cache", located at `pop`)."""
    n = at.load(size)
    if check:
        ok = at.val(arith.CmpiOp(n, at.index(0), "sgt"))
        at.op(cf.AssertOp(ok, op_error(pop, "pop on empty cache")))
    top = at.val(arith.SubiOp(n, at.index(1)))
    at.store(top, size)
    return top
