"""The scalar clean-up every C kernel gets before AD: what Clang's `-O2` and `mem2reg`
do to a function before Enzyme sees it, and the unrolling its loop pragmas ask for.

Enzyme differentiates LLVM's optimised IR, where the several loads of one C `u[i]` are
one value and a scalar kept in memory lives in a register; TapeFlow's AD sees what the
C frontend emits, one op per C occurrence, and would cache each copy on the tape. So
the C path runs, in this order:

    canonicalize, cse                 (constant bounds folded: trip counts known)
    tapeflow-promote-scalars          (a one-element local buffer as SSA values; an
                                       element a loop reads and writes at invariant
                                       indices carried through it, as LICM does)
    tapeflow-unroll                   (the loops' unroll pragmas)
    canonicalize, cse                 (the copies' index arithmetic shared)

`compile_c` applies it (`optimize=False`, `tapeflow-cc -O0`: the translation as is), so
every tool that reads a C file (tapeflow-opt, -run, -sim, -bench, the evaluation) runs
the same passes.

Bits. xDSL's float canonicalizations fold only ops whose operands are both constants
(`FoldConstConstOp`: IEEE-rounded, as the op would compute) or need fast-math flags the
frontend never sets (`reassoc` for `FoldConstsByReassociation`, `nnan`/`nsz` for the
select-to-min/max pattern); cse and the promotion only merge reads of one value. So
every forward value keeps its bits. The gradient may not, where cse merges loads: the
merged load's adjoint sums its uses before it is added to the shadow, while each
separate load added its own. Where a shadow entry takes nothing else in between the
sums agree (every salam kernel, bit for bit); in a stencil (u[i-1], u[i], u[i+1] feed
du[i] from three iterations) the last bits move, as they do after LLVM's GVN.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnknownLoc
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)


class _Located(RewritePattern):
    """`pattern`, remembering the op it rewrites: the ops it makes take its location."""

    def __init__(self, pattern: RewritePattern):
        self.pattern = pattern
        self.at: Operation | None = None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        self.at = op
        self.pattern.match_and_rewrite(op, rewriter)

    def locate(self, new: Operation) -> None:
        if isinstance(new.location, UnknownLoc) and self.at is not None:
            new.location = self.at.location


def canonicalize(ctx: Context, module: ModuleOp) -> None:
    """xDSL's `canonicalize`, each op it makes at the C location of the op it rewrote
    (the simulator's per-line reports and the diagnostics keep pointing at C)."""
    from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
    from xdsl.transforms.dead_code_elimination import region_dce

    located = _Located(GreedyRewritePatternApplier(
        [CanonicalizationRewritePattern()], ctx=ctx, folding_enabled=True
    ))  # fmt: skip
    listener = PatternRewriterListener(operation_insertion_handler=[located.locate])
    PatternRewriteWalker(located, post_walk_func=region_dce, listener=listener).rewrite_module(
        module
    )


def optimize(module: ModuleOp) -> None:
    """Runs the C path's clean-up (module doc) on `module`."""
    from tapeflow.registry import make_context
    from tapeflow.transforms.promote import PromoteScalarsPass
    from tapeflow.transforms.unroll import UnrollPass
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    ctx = make_context()
    cse = CommonSubexpressionElimination()
    canonicalize(ctx, module)
    cse.apply(ctx, module)
    PromoteScalarsPass().apply(ctx, module)
    UnrollPass().apply(ctx, module)
    canonicalize(ctx, module)
    cse.apply(ctx, module)
