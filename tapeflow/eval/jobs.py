"""Bench jobs: one kernel compiled one way (`Job`), the pipelines of the variants, the
machines they simulate.

Variants (`VARIANTS`), all from the same `tapeflow-autodiff` (min-tape) output:

- `enzyme`: `tapeflow-autodiff,tapeflow-lower-tape` -- Enzyme's layout, one DRAM array per
  cached value, through the caches (the baseline);
- `regions`: `tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions` -- one record per
  region instance, record tapes in plain DRAM buffers (the record layout alone);
- `tapeflow`: the `tapeflow{spm-bytes tile-bytes depth}` pipeline -- record tiles streamed
  through the scratchpad by DMA.

Every variant ends with the same `tapeflow-cleanup` (xDSL's canonicalize, cse, licm;
`tapeflow{... cleanup=true}` for the last one), so neither pays for index arithmetic a
production compiler removes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.passes import PassPipeline

from tapeflow.eval.kernels import bundled
from tapeflow.hwmodel.config import (
    DEFAULT_MACHINE,
    ConfigError,
    load_machine,
    parse_set,
    presets,
    validate,
)
from tapeflow.registry import get_all_passes, make_context

VARIANTS = ("enzyme", "regions", "tapeflow")
LABELS = {"enzyme": "Enzyme layout", "regions": "regions only", "tapeflow": "TapeFlow"}
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
LLC_FACTOR = 4.0
"""Default sizes make the Enzyme-layout tape at least this many times the L2 (checked)."""


def kernels() -> dict[str, Any]:
    """The bundled suite (`tapeflow.eval.kernels`): name -> kernel."""
    return bundled()


def kernel_of(job: Job) -> Any:
    """The kernel a job runs: its kernel file's (`Job.file_kernel`), or the bundled one."""
    return job.file_kernel if job.file_kernel is not None else kernels()[job.kernel]


def pipeline_spec(
    variant: str, spm_bytes: int, tile_bytes: int, depth: int, cleanup: bool = True,
    machine: str = "", mode: str = "auto", sets: Sequence[str] = (),
) -> str:  # fmt: skip
    """The `tapeflow-opt -p` pipeline of one variant; every variant ends with the same
    `tapeflow-cleanup` (canonicalize, cse, licm) unless `cleanup` is False. TapeFlow's
    cost model decides for `machine` when it names a preset or a TOML file (else for the
    default machine) with the `key=value` overrides `sets` (as `--set`), so for the machine
    simulated; `mode=always` streams every region loop."""
    tail = ",tapeflow-cleanup" if cleanup else ""
    if variant == "enzyme":
        return "tapeflow-autodiff,tapeflow-lower-tape" + tail
    if variant == "regions":
        return "tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions" + tail
    if variant == "tapeflow":
        options = f"spm-bytes={spm_bytes} tile-bytes={tile_bytes} depth={depth}"
        named = machine in presets() or (machine and Path(machine).is_file())
        if named and machine != DEFAULT_MACHINE:  # the pass's default is not spelled out
            options += f" machine={json.dumps(machine)}"
        if sets and mode == "auto":
            options += " set=" + ",".join(f'"{set_text(a)}"' for a in sets)
        if mode != "auto":
            options += f" mode={mode}"
        return f"tapeflow{{{options}{' cleanup=true' if cleanup else ''}}}"
    raise ValueError(f"unknown variant '{variant}' (known: {', '.join(VARIANTS)})")


def set_text(assignment: str) -> str:
    """`--set` `assignment` as a pass option element (`key=value`, no quotes): a string
    value is written bare, as `--set` reads it."""
    parts, value = parse_set(assignment)
    text = json.dumps(value) if not isinstance(value, str) else value
    key = ".".join(parts)
    if any(c in text for c in ' ",{}'):
        raise ConfigError(f"machine key '{key}': a value with spaces, quotes, commas or "
                          f"braces ({text!r}) cannot be given to the cost model")  # fmt: skip
    return f"{key}={text}"


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
    spm_bytes: int = 32768
    tile_bytes: int = 0
    depth: int = 2
    sweep: tuple[int, ...] = ()
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
    def spec(self) -> str:
        return pipeline_spec(self.variant, self.spm_bytes, self.tile_bytes, self.depth,
                             self.cleanup, self.machine_label, self.mode,
                             self.machine_sets)  # fmt: skip


def kernel_arguments(name: str, size: str, seed: int = 0, kernel: Any = None) -> list[Any]:
    """`@<name>_grad`'s arguments (`kernel`'s, default the bundled kernel `name`): each
    array input followed by a zero shadow when it is a float array, then the seed 1.0."""
    return (kernel or kernels()[name]).grad_arguments(size, seed)


def build_module(job: Job) -> Any:
    kernel = kernel_of(job)
    if job.file_kernel is not None:
        module = kernel.load(job.size)
    else:
        module = kernel.load(job.size, job.c_source)
    PassPipeline.parse_spec(get_all_passes(), job.spec).apply(make_context(), module)
    module.verify()
    return module


def default_raw() -> dict[str, Any]:
    """The merged table of the default machine (hwmodel/defaults.toml)."""
    return load_machine().raw


def machine_from_raw(raw: dict[str, Any], l2_size: int | None = None) -> Any:
    """A validated `Machine` from a merged table (one loaded by the driver, so that every
    job simulates exactly the same description), optionally with another L2 size."""
    table = copy.deepcopy(raw)
    if l2_size is not None:
        table["l2"]["size"] = l2_size
    return validate(table)
