"""`tapeflow-unroll`: unrolls the `scf.for` loops that carry `tapeflow.unroll`, as Clang's
loop-unroll does for an unroll pragma (the C frontend records `#pragma unroll N`,
`#pragma clang loop unroll_count(N)` / `unroll(full)` / `nounroll` so).

- a factor `k` > 1: one loop of `k` copies of the body per iteration (the induction
  value `iv + j*step` in copy `j`, each copy's yielded values the next copy's iter_args),
  over the first `k * floor(n/k)` iterations, then the original loop over the remaining
  `n mod k` (a remainder loop, omitted when the trip count `n` is a known multiple of
  `k`; with a run-time `n` the split point is computed before the loop); a known
  `n` <= `k` unrolls fully, as Clang clamps the count to the trip count;
- "full": every iteration's copy in place of the loop, when the trip count is a
  compile-time constant and the copies stay under `FULL_LIMIT` ops (Clang's pragma
  threshold, 16 Ki instructions); otherwise the loop stays as it is;
- 1 (`nounroll`): the loop stays.

The attribute is removed in every case. The copies run the iterations' ops in their
original order, so every value, float included, is computed bit for bit as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from tapeflow.transforms.analysis.constants import trip_count
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, scf
from xdsl.dialects.builtin import IntegerAttr, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

UNROLL_ATTR = "tapeflow.unroll"
"""On an `scf.for`: an integer factor (1: never unroll) or "full"."""

FULL_LIMIT = 16 * 1024
"""The most ops a full unroll may make (Clang's `-pragma-unroll-threshold`)."""


def copy_body(
    body: Block, builder: Builder, iv: SSAValue, args: tuple[SSAValue, ...]
) -> tuple[SSAValue, ...]:
    """Clones `body` (but its yield) at `builder` with induction value `iv` and iter_args
    `args`; returns the values it yields."""
    mapping: dict[SSAValue, SSAValue] = {body.args[0]: iv, **dict(zip(body.args[1:], args))}
    for op in body.ops:
        if isinstance(op, scf.YieldOp):
            return tuple(mapping.get(v, v) for v in op.operands)
        builder.insert(op.clone(mapping))
    raise AssertionError("an scf.for body ends with scf.yield")


class _Emitter:
    """Index arithmetic at `builder`, located at `loop`."""

    def __init__(self, builder: Builder, loop: scf.ForOp):
        self.builder, self.loop = builder, loop

    def __call__(self, op: Operation) -> SSAValue:
        op.location = self.loop.location
        return self.builder.insert(op).results[0]

    def const(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, builtin.IndexType())))

    def iv(self, base: SSAValue, j: int) -> SSAValue:
        """`base + j * step` (`base` for the first copy)."""
        if j == 0:
            return base
        return self(arith.AddiOp(base, self(arith.MuliOp(self.loop.step, self.const(j)))))


def unroll_by(loop: scf.ForOp, k: int) -> None:
    """`loop` as a loop of `k` copies per iteration and a remainder loop (module doc)."""
    n = trip_count(loop)
    if n is not None and n <= k:  # as Clang: a count that reaches the trip count is full
        unroll_full(loop)
        return
    at = _Emitter(Builder(InsertPoint.before(loop)), loop)
    lb, step = loop.lb, loop.step
    if n is not None:
        whole = at.const(n // k * k)
    else:  # n = ceil(max(ub - lb, 0) / step), whole = floor(n / k) * k
        span = at(arith.MaxSIOp(at(arith.SubiOp(loop.ub, lb)), at.const(0)))
        count = at(arith.DivUIOp(at(arith.AddiOp(span, at(arith.SubiOp(step, at.const(1))))), step))
        factor = at.const(k)
        whole = at(arith.MuliOp(at(arith.DivUIOp(count, factor)), factor))
    split = at(arith.AddiOp(lb, at(arith.MuliOp(whole, step))))
    wide = at(arith.MuliOp(step, at.const(k)))
    body = loop.body.block
    block = Block(arg_types=[a.type for a in body.args])
    inner = _Emitter(Builder(InsertPoint.at_end(block)), loop)
    values = tuple(block.args[1:])
    for j in range(k):
        values = copy_body(body, inner.builder, inner.iv(block.args[0], j), values)
    inner.builder.insert(scf.YieldOp(*values)).location = loop.location
    main = at.builder.insert(scf.ForOp(lb, split, wide, loop.iter_args, block))
    main.location = loop.location
    if n is not None and n % k == 0:
        Rewriter.replace_op(loop, [], main.results)
    else:  # the remainder: the loop itself, from the split on, after the main loop
        loop.operands = (split, loop.ub, step, *main.results)


def unroll_full(loop: scf.ForOp) -> None:
    """Every iteration of `loop` in its place, when its trip count is known and small."""
    n = trip_count(loop)
    if n is None or n * sum(1 for _ in loop.body.walk()) > FULL_LIMIT:
        return
    at = _Emitter(Builder(InsertPoint.before(loop)), loop)
    values = tuple(loop.iter_args)
    for j in range(n):
        values = copy_body(loop.body.block, at.builder, at.iv(loop.lb, j), values)
    Rewriter.replace_op(loop, [], values)


@dataclass(frozen=True)
class UnrollPass(ModulePass):
    """Unrolls the scf.for loops marked tapeflow.unroll (a factor, with a remainder loop, or "full")."""

    name = "tapeflow-unroll"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        marked = [o for o in op.walk() if isinstance(o, scf.ForOp) and UNROLL_ATTR in o.attributes]
        for loop in reversed(marked):  # inner loops first: an outer copy clones them unrolled
            request = loop.attributes.pop(UNROLL_ATTR)
            if isinstance(request, StringAttr) and request.data == "full":
                unroll_full(loop)
            elif isinstance(request, IntegerAttr) and request.value.data > 1:
                unroll_by(loop, request.value.data)
