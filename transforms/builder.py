"""`At`: builds ops before a fixed insertion point, as emitted (no folding, no hoisting).

Shared by the tape lowerings (`tapeflow-lower-tape`, `tapeflow-lower-to-std`). For index
arithmetic that folds constants and hoists them, use `index_utils.IndexBuilder`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter


class At:
    """Inserts ops before a fixed point and returns their results.

    `alloc_role`, when given, is the name of a unit attribute set on every `memref.alloc`
    this builder emits (unless the call names another `role`)."""

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

    def load(self, ref: SSAValue, indices: Sequence[SSAValue] = ()) -> SSAValue:
        return self.val(memref.LoadOp.get(ref, list(indices)))

    def store(self, value: SSAValue, ref: SSAValue, indices: Sequence[SSAValue] = ()) -> None:
        self.op(memref.StoreOp.get(value, ref, list(indices)))
