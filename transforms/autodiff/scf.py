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

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tapeflow.transforms.autodiff.builder import ControlFlowBuilder


def trip_count(g: ControlFlowBuilder, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
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


def _reverse_loop(
    g: ControlFlowBuilder,
    op: Operation,
    count: SSAValue,
    carried: list[SSAValue],
    free: list[SSAValue],
) -> tuple[scf.ForOp, Block, list[SSAValue], list[SSAValue]]:
    """Inserts `scf.for %k = 0 to count`, paired with the primal loop `op`, whose iter_args
    start as the adjoints of `carried` (values whose adjoints flow from one reverse
    iteration to the next) then of `free`. Returns the loop, its body and the body's
    arguments for the adjoints of `carried` and of `free`."""
    inits = [g.adjoint_or_zero(v) for v in carried]
    inits += [g.adjoint_or_zero(f) for f in free]
    block = Block(arg_types=[count.type, *(v.type for v in inits)])
    zero, one = g.const(0, count.type), g.const(1, count.type)
    loop = scf.ForOp(zero, count, one, inits, Region(block))
    g.b.insert(loop)
    g.pair_loops(op, loop)
    d_carried = list(block.args[1 : 1 + len(carried)])
    d_free = list(block.args[1 + len(carried) :])
    return loop, block, d_carried, d_free


def _yield_adjoints(g: ControlFlowBuilder, values: list[SSAValue]) -> None:
    """Ends a reverse body with `scf.yield` of the adjoints of `values` (zero if none)."""
    g.b.insert(scf.YieldOp(*(g.adjoint_or_zero(v) for v in values)))


def _after_reverse_loop(
    g: ControlFlowBuilder, loop: scf.ForOp, inputs: list[SSAValue], free: list[SSAValue]
) -> None:
    """Takes the results of the reverse `loop` built by `_reverse_loop`: the adjoints of
    `free`, and contributions to the adjoints of `inputs` (the primal loop's inits)."""
    # Free adjoints first: an init may itself be one of the free values.
    for j, f in enumerate(free):
        g.adj[f] = loop.res[len(inputs) + j]
    for j, v in enumerate(inputs):
        g.accumulate(v, loop.res[j])


def reverse_for(g: ControlFlowBuilder, op: scf.ForOp) -> None:
    body = op.body.block
    yield_ = body.last_op
    assert yield_ is not None
    lb, ub, step = g.primal(op.lb), g.primal(op.ub), g.primal(op.step)
    n = trip_count(g, lb, ub, step)
    carried = [
        i for i in range(len(op.res)) if g.is_active(body.args[i + 1]) or g.is_active(op.res[i])
    ]
    free = g.free_active(op)
    loop, block, d_carried, d_free = _reverse_loop(g, op, n, [op.res[i] for i in carried], free)
    with g.nested(block, dict(zip(free, d_free, strict=True))):
        ctx = g.new_context(body, InsertPoint.at_end(block))
        ctx.induction = (body.args[0], lb, step, n, block.args[0])
        g.ctx = ctx
        for d, i in zip(d_carried, carried, strict=True):
            g.accumulate(yield_.operands[i], d)
        g.reverse_block(body)
        _yield_adjoints(g, [*(body.args[i + 1] for i in carried), *free])
    _after_reverse_loop(g, loop, [op.iter_args[i] for i in carried], free)


def reverse_if(g: ControlFlowBuilder, op: scf.IfOp) -> None:
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
            _yield_adjoints(g, free)
    for j, f in enumerate(free):
        g.adj[f] = rev.output[j]


def reverse_while(g: ControlFlowBuilder, op: scf.WhileOp) -> None:
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

    loop, block, d_carried, d_free = _reverse_loop(
        g, op, count, [before.args[i] for i in carried], free
    )
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
        _yield_adjoints(g, [*(before.args[i] for i in carried), *free])
    _after_reverse_loop(g, loop, [op.arguments[i] for i in carried], free)


__all__ = ["IndexType", "reverse_for", "reverse_if", "reverse_while", "trip_count"]
