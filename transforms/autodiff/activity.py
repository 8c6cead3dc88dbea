"""Activity analysis: which values and ops get reverse code.

A value is *varied* when it depends on an active input (a float scalar argument or the
contents of a float memref argument) and *useful* when it can reach the result (a float
value returned, or the contents of a float memref argument or of a global). It is
*active* when it is both and its type is a float scalar or a float memref. Only active
values get adjoints;
only ops touching active values get reverse code; only values that reverse code reads
are ever put on the tape.

Memory is tracked per buffer (a memref SSA value): a float store makes the buffer depend
on the stored value, and a load makes the loaded value depend on the buffer. Distinct
buffers (arguments, allocations) are assumed not to alias, as Enzyme assumes for
`noalias`/`restrict` arguments.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from xdsl.dialects import func, memref, scf
from xdsl.dialects.arith import SelectOp
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    MemRefType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
# Argument attribute: a float argument that is constant (Enzyme's `enzyme_const`): no
# shadow, no gradient, and it varies nothing.
CONST_ARG_ATTR = "tapeflow.const"
# Function attribute (Enzyme's `enzyme_context`): every float global it uses is active.
CONTEXT_ATTR = "tapeflow.context"


def const_args(fn: func.FuncOp) -> set[int]:
    """Positions of `fn`'s arguments marked `tapeflow.const`."""
    return {i for i, d in enumerate(fn.arg_attrs or ()) if CONST_ARG_ATTR in d.data}


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


_VIEWS = (memref.CastOp, memref.SubviewOp, memref.ReinterpretCastOp, memref.ExpandShapeOp,
          memref.CollapseShapeOp)
"""Ops whose result aliases their first operand's memory (the AD has no rule for them: an
active one is refused, never differentiated as a copy)."""


def is_float_memref(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and is_float(t.element_type)


def is_differentiable(t: Attribute) -> bool:
    return is_float(t) or is_float_memref(t)


class Activity:
    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        self._edges: dict[SSAValue, list[SSAValue]] = defaultdict(list)
        self._back: dict[SSAValue, list[SSAValue]] = defaultdict(list)
        const = const_args(fn)
        args = [a for a in fn.body.block.args if a.index not in const]
        varied_seeds = [a for a in args if is_differentiable(a.type)]
        useful_seeds = [a for a in args if is_float_memref(a.type)]
        # A mutable global's contents are an output, as a float memref argument's are; it
        # is active (it gets a shadow) only when written from varied data, since it is
        # not an input (`mutable_globals`).
        useful_seeds += mutable_globals(fn)
        if CONTEXT_ATTR in fn.attributes:  # Enzyme's enzyme_context: every global an input
            varied_seeds += mutable_globals(fn)
        for op in fn.walk():
            self._add_op(op)
            if isinstance(op, func.ReturnOp) and op.parent_op() is fn:
                useful_seeds.extend(v for v in op.operands if is_float(v.type))
        self.varied = _reach(varied_seeds, self._edges)
        self.useful = _reach(useful_seeds, self._back)
        self.active_ops: set[Operation] = set()
        self._mark_ops(fn)

    def is_active(self, value: SSAValue) -> bool:
        return is_differentiable(value.type) and value in self.varied and value in self.useful

    def op_is_active(self, op: Operation) -> bool:
        return op in self.active_ops

    # -- graph ----------------------------------------------------------------------
    def _edge(self, src: SSAValue, dst: SSAValue) -> None:
        if is_differentiable(src.type) and is_differentiable(dst.type):
            self._edges[src].append(dst)
            self._back[dst].append(src)

    def _add_op(self, op: Operation) -> None:
        if isinstance(op, memref.LoadOp):
            self._edge(op.memref, op.res)
        elif isinstance(op, memref.StoreOp):
            self._edge(op.value, op.memref)
        elif isinstance(op, memref.CopyOp):
            self._edge(op.source, op.destination)
        elif isinstance(op, _VIEWS):  # an alias: a store through either is one to both
            for res in op.results:
                self._edge(op.operands[0], res)
                self._edge(res, op.operands[0])
        elif isinstance(op, scf.ForOp):
            body = op.body.block
            yield_ = body.last_op
            assert yield_ is not None
            for i, (init, res) in enumerate(zip(op.iter_args, op.res, strict=True)):
                arg = body.args[i + 1]
                self._edge(init, arg)
                self._edge(init, res)
                self._edge(yield_.operands[i], arg)
                self._edge(yield_.operands[i], res)
        elif isinstance(op, scf.IfOp):
            for region in op.regions:
                for block in region.blocks:
                    if block.last_op is not None:
                        for v, r in zip(block.last_op.operands, op.output, strict=False):
                            self._edge(v, r)
        elif isinstance(op, scf.WhileOp):
            before, after = op.before_region.block, op.after_region.block
            cond, yield_ = before.last_op, after.last_op
            assert isinstance(cond, scf.ConditionOp)
            assert yield_ is not None
            for init, arg in zip(op.arguments, before.args, strict=True):
                self._edge(init, arg)
            for v, arg in zip(yield_.operands, before.args, strict=True):
                self._edge(v, arg)
            for v, arg, res in zip(cond.args, after.args, op.res, strict=True):
                self._edge(v, arg)
                self._edge(v, res)
        elif isinstance(op, func.CallOp):  # a kept call (calls.py) may write its buffers
            for operand in op.operands:
                for out in [*op.results, *op.operands]:
                    if out is not operand and (out in op.results or is_float_memref(out.type)):
                        self._edge(operand, out)
        elif isinstance(op, SelectOp):
            self._edge(op.lhs, op.result)
            self._edge(op.rhs, op.result)
        elif op.results and not op.regions:
            for operand in op.operands:
                for res in op.results:
                    self._edge(operand, res)
        elif op.results:  # an unknown region op: everything used inside flows out
            used = [v for inner in op.walk() for v in inner.operands]
            for v in used:
                for res in op.results:
                    self._edge(v, res)

    def _mark_ops(self, root: Operation) -> bool:
        any_active = False
        for region in root.regions:
            for block in region.blocks:
                for op in block.ops:
                    if self._mark_ops(op) | self._op_itself_active(op):
                        self.active_ops.add(op)
                        any_active = True
        return any_active

    def _op_itself_active(self, op: Operation) -> bool:
        if any(self.is_active(r) for r in op.results):
            return True
        if isinstance(op, memref.StoreOp):
            return self.is_active(op.memref)
        if isinstance(op, memref.CopyOp):
            return self.is_active(op.destination)
        if isinstance(op, func.CallOp):
            return any(self.is_active(v) for v in op.operands if is_float_memref(v.type))
        if isinstance(op, scf.ForOp):
            return any(self.is_active(a) for a in op.body.block.args[1:])
        if isinstance(op, scf.WhileOp):
            return any(self.is_active(a) for a in op.before_region.block.args)
        if op.name in ("scf.yield", "scf.condition", "func.return"):
            return False
        # An op that writes an active buffer in some way we do not model.
        return (
            not op.results
            and any(self.is_active(v) for v in op.operands if isinstance(v.type, MemRefType))
            and not isinstance(op, memref.DeallocOp)
        )


def mutable_globals(fn: func.FuncOp) -> list[SSAValue]:
    """The float buffers of `fn`'s body-level `memref.get_global`s (a `constant` one is
    never written, so never varied, so never active, unless `fn` has `tapeflow.context`:
    Enzyme's shadow context, where every global is an input)."""
    return [
        op.memref
        for op in fn.body.block.ops
        if isinstance(op, memref.GetGlobalOp) and is_float_memref(op.memref.type)
    ]


def _reach(seeds: Iterable[SSAValue], edges: dict[SSAValue, list[SSAValue]]) -> set[SSAValue]:
    seen: set[SSAValue] = set(seeds)
    work = list(seen)
    while work:
        v = work.pop()
        for w in edges.get(v, ()):
            if w not in seen:
                seen.add(w)
                work.append(w)
    return seen


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """True when `value` is defined in one of `op`'s regions (at any depth)."""
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op()
        return owner is not None and op.is_ancestor(owner)
    owner = value.owner
    assert isinstance(owner, Operation)
    return owner is not op and op.is_ancestor(owner)
