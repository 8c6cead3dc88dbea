"""`tapeflow`: the whole TapeFlow pipeline in one pass.

`tapeflow{spm-bytes=N tile-bytes=T depth=D policy=P functions=f,g checkpoint=S-K cleanup=C
machine=M set=K mode=auto|always}` (`TapeFlowOptions`, transforms/options.py) runs

    tapeflow-autodiff{policy=P functions=f,g}
    tapeflow-checkpoint{schedule=S snapshots=K}       (when checkpoint is given)
    cse, licm, cse                                    (hoists loop-invariant bounds)
    tapeflow-regions                                  (the region loops chosen, below)
    tapeflow-layers{spm-bytes=N depth=D tile-bytes=T}
    tapeflow-stream{tile-bytes=T depth=D}
    tapeflow-lower-tape                               (mode=auto: the caches kept)
    tapeflow-cleanup                                  (when C is true)

on the primal program: reverse-mode AD, then one record per region instance, layers
whose `D` tile buffers fit the `N`-byte scratchpad (default: machine `M`'s `spm.size`;
tiles capped at `T` bytes when `T` > 0), and tiles streamed through a DRAM FIFO with
`D`-deep prefetching. Options are validated by the passes that use them; `policy` and
`functions` are passed to the AD pass unchanged (`functions` empty: every function
marked `tapeflow.autodiff`).

Which region loops are streamed: with `mode=always`, every one `tapeflow-regions` can
form (the pipeline before issue 20, for ablation). With `mode=auto` (the default), only
those where `tapeflow.transforms.analysis.cost_model` finds that streaming pays on machine
`M` (default: the tools' default machine; a preset name or a machine TOML; `native`: no
DMA engine), decided from the IR and the machine description alone (docs/CONTRACTS.md,
"The cost model of mode=auto"); every other cache is lowered exactly
as the Enzyme-layout baseline lowers it (`tapeflow-lower-tape`), so a program where
nothing pays compiles to the baseline's layout.

`tapeflow-cleanup` is the scalar cleanup every compared variant gets before simulation
(`tapeflow-bench` runs it after the Enzyme-layout and regions-only pipelines too), so that
neither design pays for index arithmetic a production compiler removes: xDSL's
`canonicalize` (folds `divsi x, 1`, `muli x, 1`, `addi 0, x`, constant-bound arithmetic,
single-iteration loops), `cse`, then xDSL's `licm` (hoists side-effect-free, speculatable
ops whose operands are defined outside an `scf.for`: loop-invariant trip-count and offset
arithmetic; divisions are not speculatable and stay, unless folded) and a last `cse`.
It only removes or moves pure computations, so results stay bit-identical
(`test/python/transforms/test_cleanup.py`).

The machine reaches the pass as `MachineCosts` (plain numbers): transforms/ does not import
the hardware model, so `TapeFlowPipelinePass.machine_costs` cannot load one by name. The
`tapeflow` pass the tools register (`tapeflow.machines.TapeFlowPass`, tapeflow/registry.py)
overrides it to load `machine=` through the machine description; a caller that has
loaded its machine passes the costs in (`tapeflow.machines.pipeline`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

from tapeflow.dialects import region, tape
from tapeflow.transforms.analysis import budget
from tapeflow.transforms.analysis.cost_model import (
    Decision,
    MachineCosts,
    cache_bytes,
    decide,
    nest_trip_count,
)
from tapeflow.transforms.analysis.remarks import cache_remark
from tapeflow.transforms.cleanup import canonicalize, cse, licm
from tapeflow.transforms.layers import LayersPass
from tapeflow.transforms.options import (
    DEFAULT_SPM_BYTES,
    MODES,
    TapeFlowOptions,
    check_options,
)
from tapeflow.transforms.lower_tape import LowerTapePass, indexed_at_entry
from tapeflow.transforms.regions import RegionGroup, form_regions
from tapeflow.transforms.stream import StreamPass
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException


@dataclass(frozen=True)
class CleanupPass(ModulePass):
    """Cleanup before simulation, the same for every variant: xDSL's canonicalize (folds divsi x,1 / muli x,1 / addi 0,x), cse, licm (hoists loop-invariant index arithmetic), cse.

    Through transforms/cleanup.py: the same rewrites, each op class's traits looked up once.
    """

    name = "tapeflow-cleanup"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        canonicalize(ctx, op)
        hoist_invariants(ctx, op)


def hoist_invariants(ctx: Context, op: builtin.ModuleOp) -> None:
    """Before region formation: cse, licm (hoists loop-invariant index arithmetic), cse."""
    cse(op)
    licm(op)
    cse(op)


@dataclass(frozen=True)
class TapeFlowPipelinePass(TapeFlowOptions, ModulePass):
    """Reverse-mode AD with a streamed record tape: autodiff, regions, layers, stream (cleanup=true: then tapeflow-cleanup)."""

    name = "tapeflow"

    def machine_costs(self) -> MachineCosts:
        """The costs of `machine` with the overrides `set`. transforms/ cannot load a
        machine; the pass the tools register loads it (module docstring)."""
        raise PassFailedException(
            f"{self.name}: machine '{self.machine or 'default'}': no machine loader (run the "
            "`tapeflow` pass of tapeflow.registry, or give the costs: tapeflow.machines)"
        )

    def costs_and_budget(self) -> tuple[MachineCosts | None, int]:
        """The costs the cost model decides with (None with mode=always) and the scratchpad
        budget (`spm-bytes`, else the machine's `spm.size`)."""
        needed = self.mode == "auto" or (self.spm_bytes is None and self.machine)
        costs = self.machine_costs() if needed else None
        if self.spm_bytes is not None:
            spm_bytes = self.spm_bytes
        else:
            spm_bytes = costs.spm_bytes if costs is not None else DEFAULT_SPM_BYTES
        return (costs if self.mode == "auto" else None), spm_bytes

    def autodiff_pass(self) -> ModulePass:
        """The AD pass the pipeline starts with (`policy` and `functions` passed on)."""
        from tapeflow.transforms.autodiff import AutodiffPass

        ad_options = {f.name for f in dataclasses.fields(AutodiffPass)}
        kwargs: dict[str, object] = {}
        if "policy" in ad_options:
            kwargs["policy"] = self.policy
        if "functions" in ad_options:
            kwargs["functions"] = tuple(self.functions)
        return AutodiffPass(**kwargs)  # type: ignore[arg-type]

    def after_autodiff(self) -> list[Callable[[Context, builtin.ModuleOp], None]]:
        """The rest of the pipeline as steps, for a module `autodiff_pass` has
        differentiated, with every option validated and the machine loaded first: a caller
        that compiles several pipelines of one kernel differentiates it once, and the
        pipelines of several machines hoist it once (`hoist_invariants`, the first step
        without a checkpoint) (`tapeflow-bench`)."""
        given = {} if self.spm_bytes is None else {"spm_bytes": (self.spm_bytes, 1)}
        check_options(self.name, **given, depth=(self.depth, 1), tile_bytes=(self.tile_bytes, 0))
        if self.mode not in MODES:
            raise PassFailedException(
                f"{self.name}: option mode must be one of {', '.join(MODES)}, got '{self.mode}'"
            )
        costs, spm_bytes = self.costs_and_budget()
        layers = LayersPass(spm_bytes=spm_bytes, depth=self.depth, tile_bytes=self.tile_bytes)
        stream = StreamPass(tile_bytes=self.tile_bytes, depth=self.depth)
        steps: list[Callable[[Context, builtin.ModuleOp], None]] = []
        if self.checkpoint:
            from tapeflow.transforms.checkpoint import CheckpointPass, parse_spec
            from tapeflow.transforms.checkpoint import check_options as check_checkpoint

            schedule, snapshots = parse_spec(self.name, self.checkpoint)
            check_checkpoint(self.name, schedule, snapshots)
            steps.append(CheckpointPass(snapshots=snapshots, schedule=schedule).apply)
        # Loop-invariant bounds (a C frontend's `n - 1` computed in the outer loop) would
        # make the regions pass leave caches in Enzyme's layout: hoist them first. Not
        # `canonicalize`: it folds a one-iteration forward loop and not its reverse twin,
        # whose trip count is computed, so the regions pass would find them unmatched.
        steps.append(hoist_invariants)

        def streamed(ctx: Context, op: builtin.ModuleOp) -> None:
            if costs is None:
                form_regions(op, _stream_all)
            else:
                form_regions(op, functools.partial(_select, costs, spm_bytes, self.depth))
            layers.apply(ctx, op)
            stream.apply(ctx, op)
            if costs is not None and any(isinstance(o, tape.InitOp) for o in op.walk()):
                # What the cost model kept is lowered as the baseline lowers it.
                LowerTapePass().apply(ctx, op)

        steps.append(streamed)
        if self.cleanup:
            steps.append(CleanupPass().apply)
        return steps

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        steps = self.after_autodiff()  # every option validated before changing anything
        self.autodiff_pass().apply(ctx, op)
        for step in steps:
            step(ctx, op)


def _stream_all(fn: func.FuncOp, groups: list[RegionGroup]) -> list[RegionGroup]:
    for group in groups:
        for use in group.caches:
            cache_remark(use.push, "streamed (mode=always)")
    return groups


def _select(
    costs: MachineCosts, spm_bytes: int, depth: int, fn: func.FuncOp, groups: list[RegionGroup]
) -> list[RegionGroup]:
    """The region loops of `fn` the cost model streams (`cost_model.decide`), with remarks."""
    sizes = [cache_bytes(o) for o in fn.walk() if isinstance(o, tape.InitOp)]
    fn_bytes = None if any(b is None for b in sizes) else sum(sizes)  # type: ignore[misc]
    loops = [g for g in groups if g.fwd_loops or g.while_op is not None]
    fn_record_bytes = sum(_record_bytes(g) for g in loops)
    chosen = []
    for group in groups:
        if group.while_op is None and not group.fwd_loops:
            decision = Decision(False, "kept in Enzyme's layout: not in a loop (one record)")
        else:
            # A while loop's records are counted only as it runs: a nest of unknown trip
            # count whose Enzyme layout is a growable stack per value.
            counted = group.while_op is None
            rule = functools.partial(
                decide, record_bytes=_record_bytes(group),
                records=nest_trip_count(group.fwd_loops) if counted else None,
                caches=len(group.caches), fn_bytes=fn_bytes, fn_record_bytes=fn_record_bytes,
                depth=depth,
                indexed=counted and all(indexed_at_entry(use.init) for use in group.caches),
            )  # fmt: skip
            decision = budget.decided(rule, costs, spm_bytes)
        if decision.stream or decision.regions:
            group.in_dram = not decision.stream
            chosen.append(group)
        for use in group.caches:
            cache_remark(use.push, decision.reason)
    return chosen


def _record_bytes(group: RegionGroup) -> int:
    return region.RecordType([u.push.value.type for u in group.caches]).size
