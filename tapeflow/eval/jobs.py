"""Bench jobs: one kernel compiled one way (`Job`), the pipelines of the variants, the
machines they simulate.

Variants (`VARIANTS`), all from the same `tapeflow-autodiff` (min-tape) output:

- `enzyme`: `tapeflow-autodiff,tapeflow-lower-tape` -- Enzyme's layout, one DRAM array per
  cached value, through the caches (the baseline);
- `regions`: `tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions` -- one record per
  region instance, record tapes in plain DRAM buffers (the record layout alone);
- `tapeflow`: the `tapeflow{spm-bytes tile-bytes depth}` pipeline -- record tiles streamed
  through the scratchpad by DMA;
- `ideal-tape`: `tapeflow-autodiff,tapeflow-lower-tape{ideal_tape=true}` -- the `enzyme`
  program with every tape access counted but free (no memory access: gem5-SALAM's "ad"
  runs), the bound a tape layout can approach (`captured` in the reports).

Beside them, `BASELINES`: `enzyme-mlir`, real Enzyme-MLIR's gradient (`enzyme-autodiff`,
the optional extra `enzyme`), its tape as Enzyme allocates it; checked against ours by
relative error (`AGREEMENT`), as it is another program.

Every variant ends with the same `tapeflow-cleanup` (xDSL's canonicalize, cse, licm;
`tapeflow{... cleanup=true}` for the last one), so neither pays for index arithmetic a
production compiler removes.

The pipelines are pass objects (`tapeflow.machines.pipeline`) given the machine costs of
the job's machine; their `tapeflow-opt -p` text (`pipeline_text`) is for the reports and
for users.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tapeflow import machines
from tapeflow.eval.kernels import bundled
from tapeflow.hwmodel.config import (
    DEFAULT_MACHINE,
    load_machine,
    parse_set,
    presets,
    validate,
)
from tapeflow.registry import make_context
from tapeflow.transforms.options import DEFAULT_DEPTH, DEFAULT_POLICY, TapeFlowOptions
from tapeflow.transforms.pipeline import CleanupPass, TapeFlowPipelinePass, hoist_invariants

VARIANTS = machines.VARIANTS
BASELINES = machines.BASELINES
LABELS = {"enzyme": "Enzyme layout", "regions": "regions only", "tapeflow": "TapeFlow",
          "ideal-tape": "ideal tape", "enzyme-mlir": "Enzyme-MLIR"}  # fmt: skip
AGREEMENT = 1e-12
"""A baseline's gradient (`BASELINES`) agrees with the Enzyme layout's when each array's
normwise relative error, max |a - b| / max |b| (b ours: `agreement.normwise_error`), is
at most this; the per-entry error is reported beside it."""
ENERGY_COMPONENTS = ("compute", "L1", "L2", "SPM", "DMA", "leakage", "DRAM")
"""Energy components of the report (`leakage` is 0 unless the machine sets it)."""
KIB = 1024
MIB = 1024 * 1024
DEFAULT_SWEEP = tuple(KIB * k for k in (32, 64, 128, 256, 512, 1024, 2048, 4096))
"""L2 capacities swept on the default machine (L1 stays at the machine's size)."""
SWEEP_MAX = 4 * MIB
"""The default sweep of a machine: L2 = max(4 KiB, its L1) doubling up to this."""
MACHINES = ("default-45nm", "accel-salam")
"""The machine presets `tapeflow-bench` reports by default (and `--machine all`)."""
TOLERANCE = 0.05
"""`cache needed` = the smallest swept capacity whose cycles are within 5% of the best."""
SPM_SWEEP = tuple(512 << k for k in range(7))
"""Scratchpad capacities TapeFlow is swept over (`Job.spm_sweep`): 512 B to 32 KiB, powers
of two (issue 29 item 5)."""
SPM_TOLERANCE = 0.02
"""`scratchpad needed` = the smallest swept scratchpad whose TapeFlow cycles are within 2%
of TapeFlow's best over the sweep (issue 29 item 5's rule, not fitted)."""
LLC_FACTOR = 4.0
"""Default sizes make the Enzyme-layout tape at least this many times the L2 (checked)."""


def baselines() -> tuple[tuple[str, ...], list[str]]:
    """The baselines this installation can run, and a line for each it cannot."""
    from tapeflow.baselines import enzyme_mlir

    if enzyme_mlir.available():
        return BASELINES, []
    return (), [f"variant enzyme-mlir skipped: {enzyme_mlir.MISSING}"]


def kernels() -> dict[str, Any]:
    """The bundled suite (`tapeflow.eval.kernels`): name -> kernel."""
    return bundled()


def kernel_of(job: Job) -> Any:
    """The kernel a job runs: its kernel file's (`Job.file_kernel`), or the bundled one."""
    return job.file_kernel if job.file_kernel is not None else kernels()[job.kernel]


def tapeflow_options(
    spm_bytes: int | None = None, tile_bytes: int = 0, depth: int = DEFAULT_DEPTH,
    cleanup: bool = True, machine: str = "", mode: str = "auto", sets: Sequence[str] = (),
    checkpoint: str = "",
) -> TapeFlowOptions:  # fmt: skip
    """TapeFlow's options for the machine labelled `machine` with the `--set` overrides
    `sets`: the machine is named when it is a preset or a TOML file other than the default
    (the pass's default is not spelled out), the overrides only when the cost model decides
    (`mode=auto`); `mode=always` streams every region loop."""
    named = machine in _presets() or (machine and Path(machine).is_file())
    return TapeFlowOptions(
        spm_bytes=spm_bytes, tile_bytes=tile_bytes, depth=depth, checkpoint=checkpoint,
        cleanup=cleanup, machine=machine if named and machine != DEFAULT_MACHINE else "",
        set=tuple(sets) if mode == "auto" else (), mode=mode,
    )  # fmt: skip


@cache
def _presets() -> frozenset[str]:
    """The packaged presets' names (`presets` lists their folder at each call)."""
    return frozenset(presets())


def pipeline_spec(variant: str, *args: Any, **kwargs: Any) -> str:
    """The `tapeflow-opt -p` text of one variant's pipeline (`tapeflow_options`' arguments),
    for users and scripts that run `tapeflow-opt`."""
    return pipeline_text(machines.pipeline(variant, tapeflow_options(*args, **kwargs)))


def pipeline_text(passes: Sequence[ModulePass]) -> str:
    """The `tapeflow-opt -p` text of `passes`: what the reports print, and what a user runs
    to compile as the harness did."""
    return ",".join(_pass_text(p) for p in passes)


def pipeline_key(passes: Sequence[ModulePass]) -> str:
    """A canonical text of `passes`, every option and the machine costs they decide with:
    equal keys, the same compilation."""
    options = [asdict(p) for p in passes]  # type: ignore[call-overload]
    return json.dumps([[p.name, o] for p, o in zip(passes, options, strict=True)],
                      sort_keys=True)  # fmt: skip


def _pass_text(p: ModulePass) -> str:
    if not isinstance(p, TapeFlowOptions):
        return str(p.pipeline_pass_spec())  # the options that differ from the defaults
    options = [] if p.spm_bytes is None else [f"spm-bytes={p.spm_bytes}"]
    options += [f"tile-bytes={p.tile_bytes}", f"depth={p.depth}"]
    if p.policy != DEFAULT_POLICY:
        options.append(f"policy={p.policy}")
    if p.functions:
        options.append("functions=" + ",".join(p.functions))
    if p.machine:
        options.append(f"machine={json.dumps(p.machine)}")
    if p.set:
        options.append("set=" + ",".join(json.dumps(set_text(a)) for a in p.set))
    if p.mode != "auto":
        options.append(f"mode={p.mode}")
    if p.cleanup:
        options.append("cleanup=true")
    if p.checkpoint:
        options.append(f"checkpoint={p.checkpoint}")
    return f"{p.name}{{{' '.join(options)}}}"


def set_text(assignment: str) -> str:
    """`--set` `assignment` as a pass option element (`key=value`, no quotes): a string
    value is written bare, as `--set` reads it."""
    parts, value = parse_set(assignment)
    text = json.dumps(value) if not isinstance(value, str) else value
    return f"{'.'.join(parts)}={text}"


def apply_passes(module: Any, passes: Sequence[ModulePass]) -> None:
    """Compile `module` in place by `passes`, and verify the result."""
    ctx = make_context()
    for p in passes:
        p.apply(ctx, module)
    module.verify()


@dataclass(frozen=True)
class Job:
    """One kernel compiled one way and simulated (picklable: runs in a worker)."""

    kernel: str
    variant: str
    size: str = "default"
    machine: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """The merged machine table (`Machine.raw`); empty: hwmodel/defaults.toml."""
    machine_label: str = ""
    """Which of the run's machines this job belongs to (`--machine` value)."""
    machine_sets: tuple[str, ...] = ()
    """The `--set` overrides in `machine` (TapeFlow's cost model applies them too)."""
    spm_bytes: int | None = None
    """TapeFlow's scratchpad budget; None: the machine's `spm.size`."""
    tile_bytes: int = 0
    depth: int = DEFAULT_DEPTH
    sweep: tuple[int, ...] = ()
    spm_sweep: tuple[int, ...] = ()
    """Scratchpad capacities to run the job at besides its own (`spm_job`): its result's
    `spm_sweep` has one point per capacity."""
    spm_point: bool = False
    """A point of another job's `spm_sweep` (its result goes to that job's)."""
    seed: int = 0
    backend: str = "auto"
    cleanup: bool = True
    """End the pipeline with `tapeflow-cleanup` (off only to measure what it removes)."""
    mode: str = "auto"
    """TapeFlow's `mode` (`always`: stream every region loop, the cost model's ablation)."""
    c_source: str = ""
    """A C twin of the kernel (`tapeflow-bench --kernels k.c`), compiled with the size's
    `-D` macros, instead of the bundled MLIR."""
    file_kernel: Any = None
    """A `tapeflow.eval.kernels.FileKernel` (a user's file, a suite's C kernel) instead of a
    bundled kernel."""
    progress_lines: bool = False
    """Print a line on stderr as each of its runs finishes (tapeflow-bench off a terminal:
    a task of one kernel can take minutes)."""

    @property
    def options(self) -> TapeFlowOptions:
        return tapeflow_options(self.spm_bytes, self.tile_bytes, self.depth, self.cleanup,
                                self.machine_label, self.mode, self.machine_sets)  # fmt: skip

    @property
    def spec(self) -> str:
        """The job's pipeline as `tapeflow-opt -p` text (reports, compile keys)."""
        return pipeline_text(machines.pipeline(self.variant, self.options))

    def passes(self) -> list[ModulePass]:
        """The job's pipeline, TapeFlow's deciding for the job's own machine (`machine`,
        its `--set` overrides in it), loaded here once."""
        machine = machine_from_raw(self.machine or default_raw())
        options = self.options
        spm_bytes = machine.spm_size if self.spm_bytes is None else self.spm_bytes
        costs = machines.machine_costs(machine, options.machine)
        return machines.pipeline(self.variant, replace(options, spm_bytes=spm_bytes), costs)


def spm_job(job: Job, capacity: int) -> Job:
    """`job` on its machine with a scratchpad of `capacity` bytes (`spm.size`, and the
    budget TapeFlow compiles for), at the machine's own L2: a point of its `spm_sweep`."""
    table = copy.deepcopy(job.machine or default_raw())
    table["spm"]["size"] = capacity
    return replace(job, machine=table, spm_bytes=capacity, sweep=(), spm_sweep=(),
                   spm_point=True)  # fmt: skip


def kernel_arguments(name: str, size: str, seed: int = 0, kernel: Any = None) -> list[Any]:
    """`@<name>_grad`'s arguments (`kernel`'s, default the bundled kernel `name`): each
    array input followed by a zero shadow when it is a float array, then the seed 1.0."""
    return (kernel or kernels()[name]).grad_arguments(size, seed)


def build_module(job: Job, passes: Sequence[ModulePass] | None = None,
                 shared: dict[Any, Any] | None = None,
                 cleaned: dict[Any, Any] | None = None) -> Any:  # fmt: skip
    """`job`'s kernel compiled by `passes` (default: `job.passes()`), without the functions
    its gradient's entry does not call (`drop_unreached`). With `shared` (a dict
    the caller keeps for the jobs of one kernel), the kernel is parsed once and
    differentiated once per AD pass, and each pipeline compiles a clone of that: the
    pipelines of every variant start with the same `tapeflow-autodiff` (and TapeFlow's, of
    every machine, with the same `hoist_invariants`, done once too). With `cleaned`
    too, a pipeline ending with `tapeflow-cleanup` whose IR before it another pipeline
    gave (the same `ir_key`) returns that pipeline's module, cleaned and verified once:
    variants and machines often differ only in what they do not change."""
    passes = job.passes() if passes is None else passes
    entry = kernel_of(job).grad_entry
    if shared is None:
        module = _load(job)
        apply_passes(module, passes)
        drop_unreached(module, entry)
        return module
    source = (job.kernel, job.size, job.c_source, job.file_kernel)
    if source not in shared:
        shared[source] = _load(job)
    ad, steps = split_autodiff(passes)
    if ad is None:
        module = shared[source].clone()
    else:
        if (source, ad) not in shared:
            differentiated = shared[source].clone()
            ad.apply(make_context(), differentiated)
            drop_unreached(differentiated, entry)
            shared[source, ad] = differentiated
        start: tuple[Any, ...] = (source, ad)
        if steps and steps[0] is hoist_invariants:
            # The TapeFlow pipelines of every machine hoist the same module first.
            steps.pop(0)
            hoisted_key = (*start, hoist_invariants)
            if hoisted_key not in shared:
                hoisted = shared[start].clone()
                hoist_invariants(make_context(), hoisted)
                shared[hoisted_key] = hoisted
            start = hoisted_key
        module = shared[start].clone()
    cleanup = steps.pop() if cleaned is not None and ends_with_cleanup(passes) else None
    ctx = make_context()
    for step in steps:
        step(ctx, module)
    drop_unreached(module, entry)  # before the cleanup: the functions it drops are not run
    if cleanup is None:
        module.verify()
        return module
    before = ir_key(module)
    if before not in cleaned:
        cleanup(ctx, module)
        module.verify()
        cleaned[before] = module
    return cleaned[before]


def drop_unreached(module: ModuleOp, entry: str) -> None:
    """Drops the functions `@entry` does not call, directly or not (the primal kernel): a
    job runs `@entry` alone, and each of its pipelines would clean, verify and compile
    them for nothing. Only functions go; a module without `@entry` stays whole."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    if entry not in functions:
        return
    reached, work = {entry}, [entry]
    while work:
        for op in functions[work.pop()].walk():
            for attr in (*op.properties.values(), *op.attributes.values()):
                name = attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None
                if name in functions and name not in reached:
                    reached.add(name)
                    work.append(name)
    for name, f in functions.items():
        if name not in reached:
            f.detach()
            f.erase()


def ends_with_cleanup(passes: Sequence[ModulePass]) -> bool:
    """Whether `passes` end with `tapeflow-cleanup`, so that `split_autodiff`'s last step
    is the cleanup alone: a last `tapeflow-cleanup`, or one `tapeflow{cleanup=true}`."""
    last = passes[-1] if passes else None
    alone = len(passes) == 1 and isinstance(last, TapeFlowPipelinePass)
    return isinstance(last, CleanupPass) or (alone and last.cleanup)  # type: ignore[union-attr]


def split_autodiff(passes: Sequence[ModulePass],
                   ) -> tuple[ModulePass | None, list[Callable[[Context, Any], None]]]:  # fmt: skip
    """The AD pass `passes` start with (None: they do not) and the steps after it, those of
    the `tapeflow` pass with its options validated here, as its `apply` does first, and
    its `cleanup=true` as a step of its own. Real Enzyme-MLIR's `enzyme-autodiff` is an
    AD pass too: the machines' `enzyme-mlir` jobs differentiate once."""
    from tapeflow.baselines.enzyme_mlir import EnzymeAutodiffPass
    from tapeflow.transforms.autodiff import AutodiffPass

    if not passes:
        return None, []
    first, rest = passes[0], [p.apply for p in passes[1:]]
    if isinstance(first, TapeFlowPipelinePass):
        tail = [CleanupPass().apply] if first.cleanup else []
        after = replace(first, cleanup=False).after_autodiff()
        return first.autodiff_pass(), [*after, *tail, *rest]
    if isinstance(first, AutodiffPass | EnzymeAutodiffPass):
        return first, rest
    return None, [first.apply, *rest]


def ir_key(op: Operation) -> tuple[Any, ...]:
    """A hashable key of `op`'s IR: equal keys, the same IR (names, operands by where their
    values are defined, types, properties and attributes, value names, successors,
    regions), six times faster to make than printing it."""
    numbers: dict[Any, int] = {}

    def number(x: Any) -> int:
        return numbers.setdefault(x, len(numbers))

    def key(o: Operation) -> tuple[Any, ...]:
        return (o.name, tuple(number(v) for v in o.operands),
                tuple((number(r), r.type, r.name_hint) for r in o.results),
                tuple(o.properties.items()), tuple(o.attributes.items()),
                tuple(number(b) for b in o.successors),
                tuple(tuple((number(b), tuple((number(a), a.type, a.name_hint) for a in b.args),
                             tuple(key(c) for c in b.ops)) for b in r.blocks)
                      for r in o.regions))  # fmt: skip

    return key(op)


def _load(job: Job) -> Any:
    """The job's primal module, parsed (or compiled from C) and verified."""
    kernel = kernel_of(job)
    if job.file_kernel is not None:
        return kernel.load(job.size)
    return kernel.load(job.size, job.c_source)


def default_raw() -> dict[str, Any]:
    """The merged table of the default machine (hwmodel/defaults.toml)."""
    return load_machine().raw


def machine_from_raw(raw: dict[str, Any], l2_size: int | None = None) -> Any:
    """A validated `Machine` from a merged table (one loaded by the driver, so that every
    job simulates exactly the same description), optionally with another L2 size. Each
    table and size is copied and validated once per process (`_VALIDATED`)."""
    key = (json.dumps(raw, sort_keys=True), l2_size)
    if key not in _VALIDATED:
        table = copy.deepcopy(raw)
        if l2_size is not None:
            table["l2"]["size"] = l2_size
        if len(_VALIDATED) >= 1024:  # a long sweep's machines
            _VALIDATED.clear()
        _VALIDATED[key] = validate(table)
    return _VALIDATED[key]


_VALIDATED: dict[tuple[str, int | None], Any] = {}
"""`machine_from_raw`'s machines by table (JSON) and L2 size: a `Machine` is frozen, and
the jobs of a bench task load the same two or three tens of times each (a millisecond
each, a twentieth of tapeflow-bench --quick's CPU)."""
