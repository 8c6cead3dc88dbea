"""Reversal of structured control flow (Enzyme's `SCFAutoDiffOpInterfaceImpl`).

- `scf.for %iv = lb to ub step s iter_args(...)` becomes, in the reverse sweep,
  `scf.for %k = 0 to n step 1 iter_args(d_iter_args..., d_free...)` with
  `n = max(0, ceildiv(ub - lb, s))` and `iv = lb + (n-1-k)*s` recomputed in the body (when
  the body needs it). The adjoints of the loop results seed the yielded values of the last
  iteration; the adjoints of the body's iter_args are yielded to the previous iteration;
  after the loop they are the adjoints of the inits. Adjoints of active scalars defined
  outside the loop and used inside (`d_free`) are carried as extra iter_args.
- `scf.if %c` becomes `scf.if %c` (the condition is cached when it is computed inside a
  loop) whose branches run the adjoint of the corresponding primal branch and yield the
  updated adjoints of the outer values they touch.
- `scf.while` (which the preparation gave an iteration counter, its last result) becomes:
  the adjoint of the last evaluation of the `before` region (the one that exited), then
  `scf.for %k = 0 to count` over the adjoint of `after` followed by the adjoint of
  `before`. The count is always pushed on a cache.

Forward and reverse loops carry the same `tapeflow.loop = N : i64`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

if TYPE_CHECKING:
    from tapeflow.transforms.autodiff.driver import Gradient


def trip_count(g: Gradient, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
    """max(0, (ub - lb + step - 1) / step), for a positive step."""
    ins = g.b.insert
    one = g.const(1, lb.type)
    zero = g.const(0, lb.type)
    span = ins(arith.SubiOp(ub, lb)).result
    span = ins(arith.AddiOp(span, step)).result
    span = ins(arith.SubiOp(span, one)).result
    n = ins(arith.DivSIOp(span, step)).result
    negative = ins(arith.CmpiOp(n, zero, "slt")).result
    return ins(arith.SelectOp(negative, zero, n)).result


def _reverse_loop(g: Gradient, count: SSAValue, inits: list[SSAValue]) -> tuple[scf.ForOp, Block]:
    block = Block(arg_types=[count.type, *(v.type for v in inits)])
    zero, one = g.const(0, count.type), g.const(1, count.type)
    loop = scf.ForOp(zero, count, one, inits, Region(block))
    g.b.insert(loop)
    return loop, block


def reverse_for(g: Gradient, op: scf.ForOp) -> None:
    body = op.body.block
    yield_ = body.last_op
    assert yield_ is not None
    lb, ub, step = g.primal(op.lb), g.primal(op.ub), g.primal(op.step)
    n = trip_count(g, lb, ub, step)
    carried = [
        i for i in range(len(op.res)) if g.is_active(body.args[i + 1]) or g.is_active(op.res[i])
    ]
    free = g.free_active(op)
    inits = [g.adjoint_or_zero(op.res[i]) for i in carried]
    inits += [g.adjoint_or_zero(f) for f in free]
    loop, block = _reverse_loop(g, n, inits)
    g.pair_loops(op, loop)
    d_carried = list(block.args[1 : 1 + len(carried)])
    d_free = list(block.args[1 + len(carried) :])
    with g.nested(block, dict(zip(free, d_free, strict=True))):
        ctx = g.new_context(body, InsertPoint.at_end(block))
        ctx.induction = (body.args[0], lb, step, n, block.args[0])
        g.ctx = ctx
        for d, i in zip(d_carried, carried, strict=True):
            g.accumulate(yield_.operands[i], d)
        g.reverse_block(body)
        outs = [g.adjoint_or_zero(body.args[i + 1]) for i in carried]
        outs += [g.adjoint_or_zero(f) for f in free]
        g.b.insert(scf.YieldOp(*outs))
    # Free adjoints first: an init may itself be one of the free values.
    for j, f in enumerate(free):
        g.adj[f] = loop.res[len(carried) + j]
    for j, i in enumerate(carried):
        g.accumulate(op.iter_args[i], loop.res[j])


def reverse_if(g: Gradient, op: scf.IfOp) -> None:
    cond = g.primal(op.cond)
    free = g.free_active(op)
    init_free = [g.adjoint_or_zero(f) for f in free]
    d_results = [
        (i, d)
        for i, r in enumerate(op.output)
        if g.is_active(r) and (d := g.adjoint(r)) is not None
    ]
    then_block, else_block = Block(), Block()
    rev = scf.IfOp(cond, [f.type for f in free], Region(then_block), Region(else_block))
    g.b.insert(rev)
    for region, block in ((op.true_region, then_block), (op.false_region, else_block)):
        with g.nested(block, dict(zip(free, init_free, strict=True))):
            if region.blocks:
                primal = region.block
                g.ctx = g.new_context(primal, InsertPoint.at_end(block))
                terminator = primal.last_op
                assert terminator is not None
                for i, d in d_results:
                    g.accumulate(terminator.operands[i], d)
                g.reverse_block(primal)
            g.b.insert(scf.YieldOp(*(g.adjoint_or_zero(f) for f in free)))
    for j, f in enumerate(free):
        g.adj[f] = rev.output[j]


def reverse_while(g: Gradient, op: scf.WhileOp) -> None:
    before, after = op.before_region.block, op.after_region.block
    cond, yield_ = before.last_op, after.last_op
    assert isinstance(cond, scf.ConditionOp)
    assert yield_ is not None
    count = g.primal_cached(op.res[-1])
    carried = [i for i in range(len(before.args) - 1) if g.is_active(before.args[i])]
    free = g.free_active(op)

    # The last evaluation of `before` (the one that left the loop), in the current scope.
    for m in range(len(op.res) - 1):
        if g.is_active(op.res[m]) and (d := g.adjoint(op.res[m])) is not None:
            g.accumulate(cond.args[m], d)
    outer = g.ctx
    g.ctx = g.new_context(before, InsertPoint.at_end(g.b.insertion_point.block))
    g.reverse_block(before)
    g.ctx = outer

    inits = [g.adjoint_or_zero(before.args[i]) for i in carried]
    inits += [g.adjoint_or_zero(f) for f in free]
    loop, block = _reverse_loop(g, count, inits)
    g.pair_loops(op, loop)
    d_carried = list(block.args[1 : 1 + len(carried)])
    d_free = list(block.args[1 + len(carried) :])
    with g.nested(block, dict(zip(free, d_free, strict=True))):
        ctx_after = g.new_context(after, InsertPoint.at_end(block))
        ctx_before = g.new_context(
            before,
            InsertPoint.after(ctx_after.pop_anchor),
            InsertPoint.after(ctx_after.rec_anchor),
        )
        g.ctx = ctx_after
        for d, i in zip(d_carried, carried, strict=True):
            g.accumulate(yield_.operands[i], d)
        g.reverse_block(after)
        g.ctx = ctx_before
        for m in range(len(after.args) - 1):
            if (d := g.adjoint(after.args[m])) is not None:
                g.accumulate(cond.args[m], d)
        g.reverse_block(before)
        outs = [g.adjoint_or_zero(before.args[i]) for i in carried]
        outs += [g.adjoint_or_zero(f) for f in free]
        g.b.insert(scf.YieldOp(*outs))
    for j, f in enumerate(free):
        g.adj[f] = loop.res[len(carried) + j]
    for j, i in enumerate(carried):
        g.accumulate(op.arguments[i], loop.res[j])


__all__ = ["IndexType", "reverse_for", "reverse_if", "reverse_while", "trip_count"]
