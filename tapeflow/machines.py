"""The machine the `tapeflow` pass decides for: where the compiler meets the machine
description.

transforms/ does not import the hardware model: its cost model reads `MachineCosts`, plain
numbers. This module makes them from a loaded `Machine` (`machine_costs`) or from a
machine's name and `--set` overrides (`load_costs`: what `tapeflow{machine=M set=...}`
names on the command line), and defines the `tapeflow` pass the tools register
(`TapeFlowPass`, tapeflow/registry.py), which loads its `machine=` that way. A caller that
has loaded its machine already (the benchmark harness) builds its pipelines as pass
objects with the costs passed in (`pipeline`): no string for xDSL to parse back, no
second load.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tapeflow.hwmodel.config import ConfigError, Machine, load_machine
from tapeflow.hwmodel.timing import rule_of
from tapeflow.transforms.analysis.cost_model import NATIVE, MachineCosts
from tapeflow.transforms.options import TapeFlowOptions
from tapeflow.transforms.pipeline import CleanupPass, TapeFlowPipelinePass

VARIANTS = ("enzyme", "regions", "tapeflow", "ideal-tape")
"""The designs compared: Enzyme's layout, packed records in DRAM, TapeFlow's pipeline, and
Enzyme's program with a free tape (every tape access counted, none a memory access: the
bound no real tape reaches, gem5-SALAM's "ad")."""

BASELINES = ("enzyme-mlir",)
"""Other programs for the same gradient, beside the layouts: `enzyme-mlir`, real
Enzyme-MLIR's (`enzyme-autodiff`, the optional extra `enzyme`). Their gradients agree
with ours within a relative error, not bit for bit."""


def machine_costs(machine: Machine, name: str = "", native: bool = False) -> MachineCosts:
    """The keys of `machine` the cost model reads (`native`: a CPU without a DMA engine)."""
    g = machine.get
    return MachineCosts(
        name=name, l1_bytes=g("l1", "size"), l2_bytes=g("l2", "size"), line=g("l1", "line"),
        l2_latency=float(g("l2", "latency")), dram_latency=float(g("dram", "latency")),
        mlp=float(g("core", "mlp")), prefetch=bool(g("prefetch", "enabled")),
        page=g("prefetch", "page"), table=g("prefetch", "table_size"),
        issue_width=g("core", "issue_width"), window_ops=g("core", "window_ops"),
        dma_issue=float(machine.ops["dma"].cycles), dma_setup=float(g("dma", "setup")),
        dma_bandwidth=machine.dma_bandwidth, spm_bytes=machine.spm_size,
        lockstep=bool(machine.raw["core"].get("lockstep", False)),
        lockstep_mlp=float(machine.raw["core"].get("lockstep_mlp", 1)),
        first_latency=float(g("l1", "latency") if g("l1", "size") else g("l2", "latency")),
        spm_latency=machine.spm_latency, native=native, rule=rule_of(machine),
        in_flight=int(g("datapath", "ports")) * int(g("datapath", "in_flight")),
    )  # fmt: skip


@functools.cache
def load_costs(name: str, overrides: tuple[str, ...] = ()) -> MachineCosts:
    """The costs of machine `name` (a preset or a TOML file; empty: the default machine;
    `native`: the default machine's caches, no DMA engine) with `key=value` `overrides`.
    A machine that cannot be loaded fails the pass."""
    native = name == NATIVE
    file = None if native or not name else name
    try:
        machine = load_machine(file)
    except ConfigError as e:
        raise PassFailedException(f"tapeflow: machine '{name}': {e}") from None
    if overrides:
        try:
            machine = load_machine(file, overrides)
        except ConfigError as e:
            raise PassFailedException(f"tapeflow: {e} (in '{','.join(overrides)}')") from None
    return machine_costs(machine, name, native)


@dataclass(frozen=True)
class TapeFlowPass(TapeFlowPipelinePass):
    __doc__ = TapeFlowPipelinePass.__doc__

    def machine_costs(self) -> MachineCosts:
        return load_costs(self.machine, tuple(self.set))


@dataclass(frozen=True)
class _CostedPass(TapeFlowPipelinePass):
    """`tapeflow` deciding for costs its caller loaded (`pipeline`)."""

    costs: MachineCosts | None = None

    def machine_costs(self) -> MachineCosts:
        assert self.costs is not None
        return self.costs


def pipeline(
    variant: str, options: TapeFlowOptions, costs: MachineCosts | None = None
) -> list[ModulePass]:
    """The passes of one variant (`VARIANTS`), each ending with `tapeflow-cleanup` when
    `options.cleanup`. TapeFlow's decides with `costs` when given (the machine the caller
    simulates), else loads `options.machine`."""
    from tapeflow.transforms.autodiff import AutodiffPass
    from tapeflow.transforms.lower_regions import LowerRegionsPass
    from tapeflow.transforms.lower_tape import LowerTapePass
    from tapeflow.transforms.regions import RegionsPass

    tail: list[ModulePass] = [CleanupPass()] if options.cleanup else []
    if variant == "enzyme":
        return [AutodiffPass(), LowerTapePass(), *tail]
    if variant == "ideal-tape":
        return [AutodiffPass(), LowerTapePass(ideal_tape=True), *tail]
    if variant == "regions":
        return [AutodiffPass(), RegionsPass(), LowerRegionsPass(), *tail]
    if variant == "tapeflow":
        if costs is None:
            return [TapeFlowPass(**asdict(options))]
        return [_CostedPass(**asdict(options), costs=costs)]
    if variant == "enzyme-mlir":
        from tapeflow.baselines.enzyme_mlir import EnzymeAutodiffPass

        return [EnzymeAutodiffPass(), *tail]
    known = ", ".join((*VARIANTS, *BASELINES))
    raise ValueError(f"unknown variant '{variant}' (known: {known})")
