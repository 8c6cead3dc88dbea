"""`tapeflow`: the whole TapeFlow pipeline in one pass.

`tapeflow{spm-bytes=N tile-bytes=T depth=D policy=P functions=f,g checkpoint=S-K cleanup=C}` runs

    tapeflow-autodiff{policy=P functions=f,g}
    tapeflow-checkpoint{schedule=S snapshots=K}       (when checkpoint is given)
    cse, licm, cse                                    (hoists loop-invariant bounds)
    tapeflow-regions
    tapeflow-layers{spm-bytes=N depth=D tile-bytes=T}
    tapeflow-stream{tile-bytes=T depth=D}
    tapeflow-cleanup                                  (when C is true)

on the primal program: reverse-mode AD, then one record per region instance, layers
whose `D` tile buffers fit the `N`-byte scratchpad (tiles capped at `T` bytes when
`T` > 0), and tiles streamed through a DRAM FIFO with `D`-deep prefetching. Options are
validated by the passes that use them; `policy` and `functions` are passed to the AD pass
unchanged (`functions` empty: every function marked `tapeflow.autodiff`).

`tapeflow-cleanup` is the scalar cleanup every compared variant gets before simulation
(`tapeflow-bench` runs it after the Enzyme-layout and regions-only pipelines too), so that
neither design pays for index arithmetic a production compiler removes: xDSL's
`canonicalize` (folds `divsi x, 1`, `muli x, 1`, `addi 0, x`, constant-bound arithmetic,
single-iteration loops), `cse`, then xDSL's `licm` (hoists side-effect-free, speculatable
ops whose operands are defined outside an `scf.for`: loop-invariant trip-count and offset
arithmetic; divisions are not speculatable and stay, unless folded) and a last `cse`.
It only removes or moves pure computations, so results stay bit-identical
(`test/python/test_cleanup.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tapeflow.transforms.layers import LayersPass
from tapeflow.transforms.regions import RegionsPass
from tapeflow.transforms.stream import StreamPass
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.loop_invariant_code_motion import LoopInvariantCodeMotionPass


@dataclass(frozen=True)
class CleanupPass(ModulePass):
    """Cleanup before simulation, the same for every variant: xDSL's canonicalize (folds divsi x,1 / muli x,1 / addi 0,x), cse, licm (hoists loop-invariant index arithmetic), cse."""

    name = "tapeflow-cleanup"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        CanonicalizePass().apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)
        LoopInvariantCodeMotionPass().apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)


def hoist_invariants(ctx: Context, op: builtin.ModuleOp) -> None:
    """Before region formation: cse, licm (hoists loop-invariant index arithmetic), cse."""
    CommonSubexpressionElimination().apply(ctx, op)
    LoopInvariantCodeMotionPass().apply(ctx, op)
    CommonSubexpressionElimination().apply(ctx, op)


@dataclass(frozen=True)
class TapeFlowPipelinePass(ModulePass):
    """Reverse-mode AD with a streamed record tape: autodiff, regions, layers, stream (cleanup=true: then tapeflow-cleanup)."""

    name = "tapeflow"

    spm_bytes: int = 32768
    tile_bytes: int = 0
    depth: int = 2
    policy: str = "min-tape"
    functions: tuple[str, ...] = ()
    checkpoint: str = ""
    """`schedule-snapshots` (e.g. `binomial-8`, or `"binomial:8"` quoted): run
    `tapeflow-checkpoint` after autodiff."""
    cleanup: bool = False
    """Run `tapeflow-cleanup` (canonicalize, cse, licm) at the end, as `tapeflow-bench` does."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from tapeflow.transforms.autodiff import AutodiffPass

        ad_options = {f.name for f in dataclasses.fields(AutodiffPass)}
        kwargs: dict[str, object] = {}
        if "policy" in ad_options:
            kwargs["policy"] = self.policy
        if "functions" in ad_options:
            kwargs["functions"] = tuple(self.functions)
        # Validate every option before changing anything.
        layers = LayersPass(spm_bytes=self.spm_bytes, depth=self.depth, tile_bytes=self.tile_bytes)
        stream = StreamPass(tile_bytes=self.tile_bytes, depth=self.depth)
        from tapeflow.transforms.layers import check_options

        check_options(
            self.name,
            spm_bytes=(self.spm_bytes, 1),  # type: ignore[arg-type]
            depth=(self.depth, 1),  # type: ignore[arg-type]
            tile_bytes=(self.tile_bytes, 0),  # type: ignore[arg-type]
        )
        checkpoint = None
        if self.checkpoint:
            from tapeflow.transforms.checkpoint import CheckpointPass, check_options, parse_spec

            schedule, snapshots = parse_spec(self.name, self.checkpoint)
            check_options(self.name, schedule, snapshots)
            checkpoint = CheckpointPass(snapshots=snapshots, schedule=schedule)
        AutodiffPass(**kwargs).apply(ctx, op)  # type: ignore[arg-type]
        if checkpoint is not None:
            checkpoint.apply(ctx, op)
        # Loop-invariant bounds (a C frontend's `n - 1` computed in the outer loop) would
        # make the regions pass leave caches in Enzyme's layout: hoist them first. Not
        # `canonicalize`: it folds a one-iteration forward loop and not its reverse twin,
        # whose trip count is computed, so the regions pass would find them unmatched.
        hoist_invariants(ctx, op)
        RegionsPass().apply(ctx, op)
        layers.apply(ctx, op)
        stream.apply(ctx, op)
        if self.cleanup:
            CleanupPass().apply(ctx, op)
