"""Enzyme's split mode: `@f_augment` (the forward sweep, returning the tape) and
`@f_reverse` (the reverse sweep, taking it), cut from the built `@f_grad`.

The cut is at the boundary the driver records (`Gradient.forward_end`): everything the
reverse sweep uses that the forward sweep defines at the function's top level crosses it
through the tape, in op order: each `!tape.cache` (the per-loop value stacks), each
scalar the reverse needs directly (a value of the function body, used by SSA in
`@f_grad`), each local buffer and shadow buffer the reverse reads or frees (a stack
buffer becomes a heap one, freed at the reverse sweep's end, since it outlives
`@f_augment`). Constants and `memref.get_global`s, and pure `arith`/`math` ops of them and
of scalar arguments, are recomputed in the reverse instead. So `@f_augment` then
`@f_reverse` run exactly the ops of `@f_grad`: the same gradients, bit for bit.

`tapeflow.tape_bytes` on `@f_augment` is the tape's size as Enzyme lays it out, a C
struct of these values (scalars by value, caches and buffers as 8-byte pointers, each
aligned to its size): what an `enzyme_allocated` buffer must hold.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import FunctionType, IntegerAttr, MemRefType, StringAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import Pure

SPLIT_ATTR = "tapeflow.split"
TAPE_BYTES_ATTR = "tapeflow.tape_bytes"


def split_names(grad_name: str) -> tuple[str, str]:
    base = grad_name.removesuffix("_grad")
    return f"{base}_augment", f"{base}_reverse"


def tape_bytes(values: list[SSAValue]) -> int:
    """The size of a C struct of `values` (see the module docstring)."""
    offset = align = 0
    for v in values:
        width = getattr(v.type, "bitwidth", None)
        n = 8 if width is None else max(1, (width + 7) // 8)  # index is 64 bits, pointers 8
        offset = -(-offset // n) * n + n
        align = max(align, n)
    return -(-offset // align) * align if values else 0


def _recomputable(op: Operation, seen: dict[Operation, bool]) -> bool:
    """Whether `op` can be recomputed in the reverse from constants and scalar arguments."""
    if op in seen:
        return seen[op]
    ok = isinstance(op, arith.ConstantOp | memref.GetGlobalOp) or (
        op.name.startswith((arith.Arith.name, math.Math.name))
        and op.has_trait(Pure)
        and not op.regions
        and all(
            not isinstance(v.type, MemRefType)
            and (v.owner is op.parent_block() or (
                isinstance(v.owner, Operation) and _recomputable(v.owner, seen)
            ))
            for v in op.operands
        )
    )
    seen[op] = ok
    return ok


def split(
    grad: func.FuncOp, forward_end: Operation | None, seeds: int
) -> tuple[func.FuncOp, func.FuncOp]:
    """`(@f_augment, @f_reverse)` of the built `@f_grad` (left unchanged), whose last
    `seeds` arguments are the adjoints of `@f`'s results (the reverse's only)."""
    block = grad.body.block
    ops = list(block.ops)
    cut = 0 if forward_end is None else ops.index(forward_end) + 1
    forward = ops[:cut]
    in_forward = {r for op in forward for r in op.results}
    crossing: dict[SSAValue, None] = {}
    for op in ops[cut:]:
        for inner in op.walk():
            for v in inner.operands:
                if v in in_forward:
                    crossing[v] = None
    seen: dict[Operation, bool] = {}
    recomputed: set[Operation] = set()
    todo = [v.owner for v in crossing if _recomputable(v.owner, seen)]
    while todo:
        op = todo.pop()
        if op not in recomputed:
            recomputed.add(op)
            todo += [v.owner for v in op.operands if v in in_forward]
    tape = [v for v in crossing if v.owner not in recomputed]
    inputs = list(grad.function_type.inputs.data)
    names = split_names(grad.sym_name.data)

    # the augmented forward: the forward sweep, returning the tape
    aug = grad.clone()
    aug.sym_name = StringAttr(names[0])
    ablock = aug.body.block
    aops = list(ablock.ops)
    amap = dict(zip(ops, aops, strict=True))
    values = {v: r for op in forward for v, r in zip(op.results, amap[op].results)}
    for op in reversed(aops[cut:]):
        Rewriter.erase_op(op)
    for arg in list(ablock.args[len(inputs) - seeds:]):
        ablock.erase_arg(arg)
    freed = []
    for v in tape:
        owner = amap[v.owner]
        if isinstance(owner, memref.AllocaOp):  # outlives @f_augment: on the heap
            heap = memref.AllocOp(list(owner.dynamic_sizes), [], owner.memref.type)
            Rewriter.replace_op(owner, heap)
            values[v] = heap.memref
            freed.append(len(inputs) + tape.index(v))
    ret = func.ReturnOp(*[values[v] for v in tape])
    ret.location = grad.location
    ablock.add_op(ret)
    aug.function_type = FunctionType.from_lists(inputs[:len(inputs) - seeds], [v.type for v in tape])
    aug.attributes[TAPE_BYTES_ATTR] = IntegerAttr(tape_bytes(tape), i64)

    # the reverse: the reverse sweep, taking the tape after the arguments
    rev = grad.clone()
    rev.sym_name = StringAttr(names[1])
    rblock = rev.body.block
    rops = list(rblock.ops)
    rmap = dict(zip(ops, rops, strict=True))
    for v in tape:
        arg = rblock.insert_arg(v.type, len(rblock.args))
        arg.name_hint = v.name_hint
        rmap[v.owner].results[v.index].replace_all_uses_with(arg)
    keep = {rmap[op] for op in recomputed}
    for op in reversed(rops[:cut]):
        if op not in keep:
            Rewriter.erase_op(op)
    end = rblock.last_op
    for position in freed:
        Rewriter.insert_op(memref.DeallocOp.get(rblock.args[position]), InsertPoint.before(end))
    rev.function_type = FunctionType.from_lists(
        [*inputs, *(v.type for v in tape)], list(grad.function_type.outputs.data)
    )
    return aug, rev
