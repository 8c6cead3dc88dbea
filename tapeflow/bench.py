"""The evaluation driver behind `tapeflow-bench`: every benchmark kernel three ways.

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

One job (`Job`, run by `run_job`, possibly in a worker process) compiles one kernel one
way, runs its gradient `@<name>_grad` on the kernel's own inputs (`make_inputs(name, size,
seed)`, zero shadows, seed 1.0) on the compiled fast path (`hwmodel.fastsim`; the op-by-op
model when the compiler rejects an op), and returns the hardware model's report and every
memref argument after the run (the gradients). A job with a `sweep` (the Enzyme layout's,
by default) runs the program ONCE for the machine and every swept L2 capacity
(`simulate_fast_many`: each capacity's hardware model hears the same run, so the sweep
costs one cache simulation per point, not one execution). `tapeflow-bench` runs the jobs
of one kernel as one task (`run_jobs_shared`): nothing is compiled or run twice, the
machines share each run, and variants that compile to the same IR share it too.

`summarize_kernel` and `geomeans` turn the jobs' results into per-kernel rows and geometric
means (controls excluded); `markdown`,
`write_plots` and `to_json` format them. Definitions are in `METRICS_DOC`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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

METRICS_DOC = """\
Definitions (all numbers from the hardware model, hwmodel/model.py and hwmodel/report.py):
- speedup = Enzyme-layout cycles / variant cycles (> 1: faster than the baseline).
- energy ratios = Enzyme-layout energy / TapeFlow energy (> 1: TapeFlow uses less):
  on-chip = compute + L1 + L2 + SPM + DMA engine (+ SRAM leakage when the machine sets
  it); on-chip memory = L1 + L2 + SPM (what the paper's 8x claim is about);
  total = on-chip + DRAM.
- on-chip SRAM of a design = L1 + L2 + the scratchpad's capacity when its program uses
  the scratchpad (report `sram.on_chip_bytes`): the Enzyme layout's is L1 + L2,
  TapeFlow's L1 + L2 + SPM. Every SRAM ratio compares these whole-chip figures; the
  scratchpad's high-water mark (the tape tiles' peak) is an extra column only.
- iso-SRAM speedup = Enzyme-layout cycles with its L2 grown to TapeFlow's whole on-chip
  SRAM / TapeFlow cycles at the machine's caches (the plain speedup gives TapeFlow its
  scratchpad on top of the same caches). Cache sizes are powers of two, so it is read off
  the Enzyme layout's L2 sweep: "a-b" = Enzyme at the smallest swept L1 + L2 >= TapeFlow's
  SRAM (a: Enzyme gets at least as much SRAM, the figure that never favours TapeFlow, and
  the one in the geomean) and at the largest <= it (b); one number when they coincide.
- SRAM for the same cycles (no threshold): from both designs' L2 sweeps, the smallest
  on-chip SRAM (L1 + L2, plus the scratchpad's capacity for TapeFlow) whose cycles are <=
  the other design's cycles at the machine's own caches; and, for a common target (the
  faster design's own cycles), each design's SRAM and their ratio (none where a design
  does not reach the target within the sweep; the geomean skips those kernels).
- SRAM needed: the Enzyme layout's L1 + L2 at the smallest L2 capacity of the sweep whose
  cycles are within 5% of the best swept cycles (L1 stays at the machine's size); TapeFlow's
  the same from its own L2 sweep (the machine's L1 + L2 without one) plus the scratchpad's
  capacity; SRAM ratio = Enzyme SRAM needed / TapeFlow SRAM needed.
- tape = peak DRAM tape storage of the Enzyme layout (bytes); tape/L2 = tape over the
  machine's L2 size; inflation = tape / bytes of every array argument of the primal.
- controls: kernels whose Enzyme-layout tape is empty (nothing cached). They are shown
  but excluded from the geometric means.
- gradients: every memref argument after the gradient run (shadows = gradients, and the
  primal buffers the kernel overwrites) must be bit-identical across the three variants."""


def kernels() -> dict[str, Any]:
    """The bundled suite (`tapeflow.kernels`): name -> kernel."""
    from tapeflow.kernels import bundled

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
        from tapeflow.hwmodel.config import DEFAULT_MACHINE, presets

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
    from tapeflow.hwmodel.config import ConfigError, parse_set

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
    """A `tapeflow.kernels.FileKernel` (a user's file, a suite's C kernel) instead of a
    bundled kernel."""

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
    from xdsl.passes import PassPipeline

    from tapeflow.registry import get_all_passes, make_context

    kernel = kernel_of(job)
    if job.file_kernel is not None:
        module = kernel.load(job.size)
    else:
        module = kernel.load(job.size, job.c_source)
    PassPipeline.parse_spec(get_all_passes(), job.spec).apply(make_context(), module)
    module.verify()
    return module


def _default_raw() -> dict[str, Any]:
    from tapeflow.hwmodel.config import load_machine

    return load_machine().raw


def machine_from_raw(raw: dict[str, Any], l2_size: int | None = None) -> Any:
    """A validated `Machine` from a merged table (one loaded by the driver, so that every
    job simulates exactly the same description), optionally with another L2 size."""
    from tapeflow.hwmodel.config import validate

    table = copy.deepcopy(raw)
    if l2_size is not None:
        table["l2"]["size"] = l2_size
    return validate(table)



def _simulate_many(module: Any, entry: str, make_args: Any, machines: Sequence[Any],
                   backend: str, timings: dict[str, float] | None = None,
                   ) -> tuple[list[Any], str]:  # fmt: skip
    """One `SimResult` per machine, from ONE compiled run (`simulate_fast_many`), or from
    op-by-op runs when the fast-path compiler rejects an op. `timings` (when given) gets
    `codegen_s` (compiling the IR to Python), `run_s` (the run and every machine's
    model) and `run_cpu_s` (its CPU seconds)."""
    from tapeflow.hwmodel.compiled import UnsupportedOpError
    from tapeflow.hwmodel.fastsim import compiled
    from tapeflow.simulate import simulate, simulate_fast_many

    t0 = time.perf_counter()
    try:
        program = compiled(module)
    except UnsupportedOpError:
        program = None
    t1, c1 = time.perf_counter(), time.process_time()
    if program is None:
        sims = [simulate(module, entry, make_args(), m, backend=backend) for m in machines]
        path = "interp"
    else:
        sims = simulate_fast_many(program, entry, make_args(), machines, backend=backend)
        path = "fast"
    if timings is not None:
        timings.update(codegen_s=t1 - t0, run_s=time.perf_counter() - t1,
                       run_cpu_s=time.process_time() - c1)  # fmt: skip
    return sims, path


def run_job(job: Job) -> dict[str, Any]:
    """Compiles and simulates one job; never raises (errors come back as `error`)."""
    return run_jobs_shared([job])["results"][0]


def run_jobs_shared(jobs: Sequence[Job]) -> dict[str, Any]:
    """`run_job` of every job, doing nothing twice (one task of `tapeflow-bench`: the
    jobs of one kernel): each pipeline is compiled once; jobs whose IR is the same text
    (the controls: an empty tape gives every variant the same program) share a
    simulation; and each distinct program runs ONCE for every machine and swept L2
    capacity its jobs need (`simulate_fast_many`), so the machines of a run share it, not
    only a sweep's capacities. A shared run that fails is redone job by job, so that an
    error stays with the job that causes it. Never raises (errors come back per job).

    Returns `results` (one per job, in order, as `run_job`'s), `runs` (one record per
    simulation run: the jobs it served, its machine count, codegen and run seconds),
    `compile_s` and `compile_cpu_s` (every pipeline's), and the task's `wall_s`, `cpu_s`
    and worker `pid`. Jobs of the controls share one run, so their bit-identical
    gradients follow from their identical IR."""
    t0, c0 = time.perf_counter(), time.process_time()
    results: list[dict[str, Any]] = [{} for _ in jobs]
    modules: dict[tuple[str, ...], tuple[Any, str]] = {}
    compile_s: dict[tuple[str, ...], tuple[float, float]] = {}  # key -> (wall, cpu)
    shared: dict[tuple[Any, ...], list[int]] = {}
    for i, job in enumerate(jobs):
        try:
            raw = job.machine or _default_raw()
            machine_from_raw(raw)  # a bad machine fails its own job, not a shared run
            key = _compile_key(job)
            if key not in modules:
                t, c = time.perf_counter(), time.process_time()
                module = build_module(job)
                modules[key] = (module, _ir_digest(module))
                compile_s[key] = (time.perf_counter() - t, time.process_time() - c)
        except BaseException as e:
            results[i] = _job_error(job, e)
            continue
        digest = modules[key][1]
        window = raw["core"]["window_ops"]  # one run needs one phase window
        shared.setdefault((digest, job.size, job.seed, job.backend, window), []).append(i)
    records: list[dict[str, Any]] = []
    for members in shared.values():
        group = [jobs[i] for i in members]
        module = modules[_compile_key(group[0])][0]
        try:
            outs, record = _run_shared(module, group, compile_s)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            if len(members) == 1:
                outs, record = [_job_error(group[0], e)], None
            else:  # redo each job alone: the error goes to the job that has it
                alone = [run_jobs_shared([job]) for job in group]
                outs = [a["results"][0] for a in alone]
                records += [r for a in alone for r in a["runs"]]
                record = None
        for i, out in zip(members, outs, strict=True):
            results[i] = out
        if record is not None:
            records.append(record)
    return {"kernels": sorted({job.kernel for job in jobs}), "results": results,
            "runs": records, "compile_s": sum(w for w, _ in compile_s.values()),
            "compile_cpu_s": sum(c for _, c in compile_s.values()),
            "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
            "pid": os.getpid()}  # fmt: skip


def _compile_key(job: Job) -> tuple[Any, ...]:
    return (job.kernel, job.size, job.spec, job.c_source, job.file_kernel)


def _ir_digest(module: Any) -> str:
    """sha256 of the printed IR: equal digests, the same program."""
    import io

    from xdsl.printer import Printer

    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return hashlib.sha256(out.getvalue().encode()).hexdigest()


def _job_header(job: Job) -> dict[str, Any]:
    return {"kernel": job.kernel, "variant": job.variant, "spec": job.spec,
            "machine": job.machine_label, "error": None}  # fmt: skip


def _job_error(job: Job, e: BaseException) -> dict[str, Any]:
    """The job's result for an exception being handled (reported per job by the driver)."""
    if isinstance(e, KeyboardInterrupt):
        raise e
    return {**_job_header(job), "error": f"{type(e).__name__}: {e}".strip(),
            "traceback": traceback.format_exc()}  # fmt: skip


def _job_machines(job: Job) -> dict[int, Any]:
    """L2 capacity -> machine: the job's own machine first, then its sweep's others."""
    raw = job.machine or _default_raw()
    machine = machine_from_raw(raw)
    out = {machine.l2.size: machine}
    for cap in job.sweep:
        if cap not in out:
            out[cap] = machine_from_raw(raw, cap)
    return out


def _run_shared(module: Any, jobs: Sequence[Job],
                compile_s: dict[tuple[str, ...], tuple[float, float]],
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:  # fmt: skip
    """Jobs with the same program, inputs and backend: ONE run for the union of their
    machines (each distinct machine table once); each job's result from its machines."""
    t0, c0 = time.perf_counter(), time.process_time()
    first = jobs[0]
    kernel = kernel_of(first)
    per_job = [_job_machines(job) for job in jobs]
    index: dict[str, int] = {}  # a machine table (its JSON) -> its place in `machines`
    machines: list[Any] = []
    slots: list[dict[int, int]] = []  # per job: L2 capacity -> its machine's place
    for mine in per_job:
        slots.append({})
        for cap, m in mine.items():
            key = json.dumps(m.raw, sort_keys=True)
            if key not in index:
                index[key] = len(machines)
                machines.append(m)
            slots[-1][cap] = index[key]
    timings: dict[str, float] = {}
    sims, path = _simulate_many(
        module, kernel.grad_entry,
        lambda: kernel.grad_arguments(first.size, first.seed), machines,
        first.backend, timings,
    )  # fmt: skip
    run = sims[0].run
    grads = {}
    names = kernel.argument_names(first.size)
    for p in run.memref_positions:
        grads[names[p]] = np.asarray(run.arguments[p])
    for i, r in enumerate(run.results):
        grads[f"result{i}"] = np.asarray(r)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    names_of = [f"{job.machine_label or 'default'}/{job.variant}" for job in jobs]
    outs = []
    for job, mine, slot, me in zip(jobs, per_job, slots, names_of, strict=True):
        by_cap = {cap: sims[i].report for cap, i in slot.items()}
        own = next(iter(mine.values()))
        report = copy.deepcopy(by_cap[own.l2.size])
        report["path"] = path
        sweep = []
        for cap in job.sweep:
            r = by_cap[cap]
            sweep.append({
                "l2_bytes": cap, "cache_bytes": own.l1.size + cap, "cycles": r["cycles"],
                "dram_bytes": r["dram"]["bytes_read"] + r["dram"]["bytes_written"],
                "l2_misses": r["levels"]["L2"]["misses"],
                "on_chip_pj": r["energy"]["on_chip_pj"],
            })  # fmt: skip
        compile_wall, compile_cpu = compile_s[_compile_key(job)]
        outs.append({
            **_job_header(job), "report": report, "path": path, "sweep": sweep,
            "grads": grads, "compile_s": compile_wall,
            "wall_s": compile_wall + wall, "cpu_s": compile_cpu + cpu,
            "shared_with": [n for n in names_of if n != me],
        })  # fmt: skip
    record = {"kernel": first.kernel, "jobs": names_of, "machines": len(machines),
              "path": path, "wall_s": wall, "cpu_s": cpu, **timings}  # fmt: skip
    return outs, record


def _argument_names(name: str) -> list[str]:
    """Names of `@<name>_grad`'s arguments: `A`, `dA` (shadow), ..., `seed`."""
    return kernels()[name].argument_names()


# ------------------------------------------------------------------------------------------
# Comparing gradients


def compare_gradients(results: dict[str, dict[str, Any]]) -> tuple[bool, list[str]]:
    """Bit-for-bit comparison of every variant's final arguments with the Enzyme layout's.
    Returns (identical, messages)."""
    base = results.get("enzyme")
    if base is None or base.get("grads") is None:
        return False, ["no Enzyme-layout result to compare with"]
    ok = True
    notes: list[str] = []
    for variant in VARIANTS[1:]:
        other = results.get(variant)
        if other is None or other.get("grads") is None:
            ok = False
            notes.append(f"{variant}: no result")
            continue
        for key, a in base["grads"].items():
            b = other["grads"].get(key)
            if b is None:
                ok = False
                notes.append(f"{variant}: argument {key} missing")
                continue
            if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
                ok = False
                if a.shape == b.shape and a.size:
                    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
                    bad = int(np.count_nonzero(a.view(np.uint8).reshape(a.size, -1)
                                               != b.view(np.uint8).reshape(b.size, -1)
                                               ) if a.dtype == b.dtype else a.size)  # fmt: skip
                    notes.append(f"{variant}: {key} differs from the Enzyme layout's in "
                                 f"{bad} of {a.size} elements (max |diff| "
                                 f"{float(np.nanmax(diff)):.3g})")  # fmt: skip
                else:
                    notes.append(f"{variant}: {key} has shape {b.shape}, Enzyme {a.shape}")
    return ok, notes


# ------------------------------------------------------------------------------------------
# Summary


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def _ratio(a: float, b: float) -> float | None:
    if not b or not math.isfinite(a) or not math.isfinite(b):
        return None
    return a / b


def default_sweep(machine: Any) -> list[int]:
    """L2 capacities swept by default: from max(4 KiB, L1) doubling up to `SWEEP_MAX` (the
    default machine's: `DEFAULT_SWEEP`)."""
    cap = max(4 * KIB, machine.l1.size)
    out = []
    while cap <= SWEEP_MAX:
        out.append(cap)
        cap *= 2
    return out


def sram_to_reach(sweep: list[dict[str, Any]], cycles: float, extra: int = 0) -> int | None:
    """The smallest on-chip SRAM (a sweep point's L1 + L2, plus `extra`, e.g. the
    scratchpad) whose cycles are <= `cycles`; None when no swept point reaches them."""
    fits = [p["cache_bytes"] for p in sweep if p["cycles"] <= cycles]
    return min(fits) + extra if fits else None


def iso_cycle_sram(enzyme: list[dict[str, Any]], tapeflow: list[dict[str, Any]],
                   own: dict[str, float], spm: int) -> dict[str, Any]:  # fmt: skip
    """The SRAM each design needs for the same cycles, from the two L2 sweeps (no
    threshold): the baseline's to match TapeFlow's cycles at the machine's own caches, and
    TapeFlow's (L1 + L2 + the scratchpad's capacity `spm`) to match the baseline's; and, for a
    common target (the FASTER of the two designs' own cycles), each design's SRAM and
    their ratio. A design that does not reach the target within the sweep gives None
    (and the ratio None: it is only bounded by the sweep)."""
    target = min(own["enzyme"], own["tapeflow"])
    e, t = sram_to_reach(enzyme, target), sram_to_reach(tapeflow, target, spm)
    return {
        "enzyme_sram_for_tapeflow_cycles_bytes": sram_to_reach(enzyme, own["tapeflow"]),
        "tapeflow_sram_for_enzyme_cycles_bytes": sram_to_reach(tapeflow, own["enzyme"], spm),
        "iso_target_cycles": target,
        "iso_enzyme_sram_bytes": e,
        "iso_tapeflow_sram_bytes": t,
        "iso_ratio": _ratio(e, t) if e is not None and t is not None else None,
    }


def cache_needed(sweep: list[dict[str, Any]], tolerance: float = TOLERANCE) -> dict[str, Any]:
    """The smallest swept capacity whose cycles are within `tolerance` of the best."""
    if not sweep:
        return {}
    best = min(p["cycles"] for p in sweep)
    for p in sorted(sweep, key=lambda p: p["l2_bytes"]):
        if p["cycles"] <= best * (1 + tolerance):
            return {"l2_bytes": p["l2_bytes"], "cache_bytes": p["cache_bytes"],
                    "cycles": p["cycles"], "best_cycles": best,
                    "at_smallest": p is min(sweep, key=lambda q: q["l2_bytes"])}  # fmt: skip
    raise AssertionError("unreachable")


@dataclass
class KernelRow:
    kernel: str
    control: bool
    grads_ok: bool
    grad_notes: list[str]
    variants: dict[str, dict[str, Any]]  # variant -> summary numbers
    speedup: dict[str, float | None]
    energy_ratio: dict[str, float | None]  # on_chip, on_chip_memory, total (Enzyme/TapeFlow)
    energy_ratio_regions: dict[str, float | None]
    tape_bytes: int
    primal_bytes: int
    inflation: float
    tape_over_l2: float
    sram: dict[str, Any]
    sweep: list[dict[str, Any]] = field(default_factory=list)
    sweep_tapeflow: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _variant_summary(res: dict[str, Any]) -> dict[str, Any]:
    r = res["report"]
    e = r["energy"]
    return {
        "cycles": r["cycles"],
        "cycle_terms": r["cycle_terms"],
        "energy_pj": dict(e["components_pj"]),
        "on_chip_pj": e["on_chip_pj"],
        "on_chip_memory_pj": e["on_chip_memory_pj"],
        "off_chip_pj": e["off_chip_pj"],
        "total_pj": e["total_pj"],
        "tape_bytes": r["tape_bytes"],
        "tape_spm_bytes": r["tape_spm_bytes"],
        "spm_high_water_bytes": r["sram"]["spm_high_water_bytes"],
        "on_chip_sram_bytes": r["sram"]["on_chip_bytes"],
        "dram_bytes": r["dram"]["bytes_read"] + r["dram"]["bytes_written"],
        "dma_bytes": r["dma"]["bytes"],
        "dma_stall_cycles": r["dma"]["stall_cycles"],
        "instructions": r["ops"]["instructions"],
        "path": res.get("path"),
        "wall_s": res.get("wall_s"),
        "cpu_s": res.get("cpu_s"),
    }


def summarize_kernel(name: str, size: str, results: dict[str, dict[str, Any]],
                     machine: Any, tolerance: float = TOLERANCE,
                     kernel: Any = None) -> KernelRow:  # fmt: skip
    """One kernel's row (`kernel`: its registry entry, default the bundled `name`)."""
    errors = [f"{v}: {r['error']}" for v, r in results.items() if r.get("error")]
    good = {v: r for v, r in results.items() if not r.get("error")}
    grads_ok, notes = compare_gradients(good) if len(good) == len(VARIANTS) else (False, [])
    variants = {v: _variant_summary(r) for v, r in good.items()}
    base = variants.get("enzyme")
    speedup: dict[str, float | None] = {}
    eratio: dict[str, float | None] = {}
    eratio_r: dict[str, float | None] = {}
    for v in VARIANTS[1:]:
        speedup[v] = _ratio(base["cycles"], variants[v]["cycles"]) if base and v in variants \
            else None  # fmt: skip
    for key in ("on_chip_pj", "on_chip_memory_pj", "total_pj"):
        t = variants.get("tapeflow")
        r = variants.get("regions")
        eratio[key] = _ratio(base[key], t[key]) if base and t else None
        eratio_r[key] = _ratio(base[key], r[key]) if base and r else None
    tape = base["tape_bytes"] if base else 0
    pbytes = (kernel or kernels()[name]).primal_bytes(size)
    sweep = good.get("enzyme", {}).get("sweep", [])
    need = cache_needed(sweep, tolerance)
    tf = variants.get("tapeflow")
    hwm = tf["spm_high_water_bytes"] if tf else 0
    cache = machine.l1.size + machine.l2.size
    spm = tf["on_chip_sram_bytes"] - cache if tf else 0  # the scratchpad it uses, if any
    tsweep = good.get("tapeflow", {}).get("sweep", [])
    tneed = cache_needed(tsweep, tolerance) if tsweep else {}
    tf_needed = (tneed["cache_bytes"] if tneed else cache) + spm
    sram = {
        "enzyme_cache_needed_bytes": need.get("cache_bytes"),
        "enzyme_l2_needed_bytes": need.get("l2_bytes"),
        "enzyme_needed_at_smallest_point": need.get("at_smallest"),
        "enzyme_on_chip_bytes": base["on_chip_sram_bytes"] if base else None,
        "tapeflow_on_chip_bytes": tf["on_chip_sram_bytes"] if tf else None,
        "tapeflow_spm_bytes": spm,
        "tapeflow_spm_high_water_bytes": hwm,
        "tapeflow_sram_needed_bytes": tf_needed if tf else None,
        "ratio": _ratio(need["cache_bytes"], tf_needed) if need and tf else None,
        "machine_cache_bytes": cache,
    }
    if sweep and tsweep and base and tf:
        own = {"enzyme": base["cycles"], "tapeflow": tf["cycles"]}
        sram.update(iso_cycle_sram(sweep, tsweep, own, spm))
    if tneed:  # --sweep-tapeflow: the whole on-chip SRAM each design needs
        sram.update({
            "tapeflow_cache_needed_bytes": tneed["cache_bytes"],
            "tapeflow_needed_at_smallest_point": tneed["at_smallest"],
            "tapeflow_total_needed_bytes": tf_needed,
            "total_ratio": sram["ratio"],
        })  # fmt: skip
    speedup["tapeflow_iso_sram"] = speedup["tapeflow_iso_sram_upper"] = None
    if tf and base and not spm:  # TapeFlow used no scratchpad: the same SRAM already
        speedup["tapeflow_iso_sram"] = speedup["tapeflow_iso_sram_upper"] = speedup["tapeflow"]
    elif tf and sweep:  # the Enzyme layout's L2 sweep around TapeFlow's whole on-chip SRAM
        target = tf["on_chip_sram_bytes"]
        more = [p for p in sweep if p["cache_bytes"] >= target]
        less = [p for p in sweep if p["cache_bytes"] <= target]
        if more:
            p = min(more, key=lambda q: q["cache_bytes"])
            speedup["tapeflow_iso_sram"] = _ratio(p["cycles"], tf["cycles"])
            sram["iso_sram_enzyme_cache_bytes"] = p["cache_bytes"]
        if less:
            p = max(less, key=lambda q: q["cache_bytes"])
            speedup["tapeflow_iso_sram_upper"] = _ratio(p["cycles"], tf["cycles"])
            sram["iso_sram_enzyme_cache_below_bytes"] = p["cache_bytes"]
    return KernelRow(
        kernel=name,
        control=tape == 0,
        grads_ok=grads_ok and not errors,
        grad_notes=notes,
        variants=variants,
        speedup=speedup,
        energy_ratio=eratio,
        energy_ratio_regions=eratio_r,
        tape_bytes=tape,
        primal_bytes=pbytes,
        inflation=tape / pbytes if pbytes else 0.0,
        tape_over_l2=tape / machine.l2.size,
        sram=sram,
        sweep=sweep,
        sweep_tapeflow=tsweep,
        errors=errors,
    )


def geomeans(rows: Sequence[KernelRow]) -> dict[str, float | None]:
    """Geometric means over the kernels that cache something and ran cleanly."""
    use = [r for r in rows if not r.control and not r.errors]
    ran = [(r.speedup["tapeflow"], r.kernel) for r in rows
           if not r.errors and r.speedup.get("tapeflow") is not None]  # fmt: skip
    worst = min(ran, default=(None, None))
    return {
        "kernels": [r.kernel for r in use],  # type: ignore[dict-item]
        # no harm (issue 20): the slowest TapeFlow run against its Enzyme layout, controls too
        "worst_speedup_tapeflow": worst[0],
        "worst_kernel": worst[1],  # type: ignore[dict-item]
        "speedup_regions": geomean(r.speedup.get("regions") for r in use),
        "speedup_tapeflow": geomean(r.speedup.get("tapeflow") for r in use),
        "speedup_tapeflow_iso_sram": geomean(r.speedup.get("tapeflow_iso_sram") for r in use),
        "on_chip_energy_ratio": geomean(r.energy_ratio.get("on_chip_pj") for r in use),
        "on_chip_memory_energy_ratio": geomean(
            r.energy_ratio.get("on_chip_memory_pj") for r in use),
        "total_energy_ratio": geomean(r.energy_ratio.get("total_pj") for r in use),
        "sram_ratio": geomean(r.sram.get("ratio") for r in use),
        "sram_total_ratio": geomean(r.sram.get("total_ratio") for r in use),
        "sram_iso_ratio": geomean(r.sram.get("iso_ratio") for r in use),
        "inflation": geomean(r.inflation for r in use),
    }


# ------------------------------------------------------------------------------------------
# Formatting


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.2f} {unit}"
    return f"{int(n)} B"


def fmt_iso(speedup: dict[str, float | None]) -> str:
    """The iso-SRAM speedup "a-b" (METRICS_DOC), or one number when a == b."""
    a, b = speedup.get("tapeflow_iso_sram"), speedup.get("tapeflow_iso_sram_upper")
    if a is None or b is None or f"{a:.2f}" == f"{b:.2f}":
        return fmt_x(a if a is not None else None)
    return f"{a:.2f}-{b:.2f}x"


def fmt_x(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}x"


def markdown(rows: Sequence[KernelRow], gm: dict[str, Any], machine: Any, *,
             size: str, header: dict[str, Any]) -> str:  # fmt: skip
    out: list[str] = []
    l2 = machine.l2.size
    suite = header.get("suite", "bundled")
    out.append(f"## tapeflow-bench: suite {suite}, {size} sizes, machine "
               f"`{header['machine_name']}`")
    out.append("")
    out.append(f"- command: `{header['command']}`")
    load = header.get("load_average")
    out.append(f"- date: {header['date']}; wall time {header['wall_s']:.0f} s with "
               f"{header['jobs']} worker(s) on {header.get('cpu_count')} core(s); CPU time "
               f"of the runs {header.get('cpu_s', 0.0):.0f} s"
               + (f"; load average at the end {load[0]:.1f}" if load else ""))  # fmt: skip
    if header.get("commit"):
        out.append(f"- source: commit {header['commit']}")
    out.append(f"- machine: {header['machine_desc']}")
    out.append(f"- TapeFlow pipeline: `{header['tapeflow_spec']}`; Enzyme layout: "
               f"`{pipeline_spec('enzyme', 0, 0, 0)}`")  # fmt: skip
    out.append(f"- cache sweep (Enzyme layout, and TapeFlow when swept): L2 = "
               f"{', '.join(fmt_bytes(c) for c in header['sweep'])} "
               f"(L1 {fmt_bytes(machine.l1.size)} fixed)")  # fmt: skip
    out.append("")
    out.append("| kernel | tape (Enzyme) | tape / L2 | inflation | Enzyme cycles | "
               "regions speedup | TapeFlow speedup | iso-SRAM speedup | on-chip energy | "
               "on-chip mem. energy | total energy | Enzyme SRAM needed | TapeFlow SRAM needed "
               "| TapeFlow SPM high-water | SRAM ratio | gradients |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        name = f"{r.kernel} (control)" if r.control else r.kernel
        e = r.variants.get("enzyme", {})
        if r.errors:
            status = "ERROR"
        else:
            status = "bit-identical" if r.grads_ok else "**DIFFER**"
        tape_l2 = "-" if r.control else f"{r.tape_over_l2:.2f}"
        need = r.sram["enzyme_cache_needed_bytes"]
        need_s = fmt_bytes(need)
        if need is not None and r.sram["enzyme_needed_at_smallest_point"]:
            need_s = "<= " + need_s
        out.append(
            f"| {name} | {fmt_bytes(r.tape_bytes)} | {tape_l2} | {r.inflation:.2f} | "
            f"{e.get('cycles', float('nan')):,.0f} | {fmt_x(r.speedup.get('regions'))} | "
            f"{fmt_x(r.speedup.get('tapeflow'))} | {fmt_iso(r.speedup)} | "
            f"{fmt_x(r.energy_ratio.get('on_chip_pj'))} | "
            f"{fmt_x(r.energy_ratio.get('on_chip_memory_pj'))} | "
            f"{fmt_x(r.energy_ratio.get('total_pj'))} | {need_s} | "
            f"{fmt_bytes(r.sram['tapeflow_sram_needed_bytes'])} | "
            f"{fmt_bytes(r.sram['tapeflow_spm_high_water_bytes'])} | "
            f"{fmt_x(r.sram['ratio'], 2)} | {status} |"
        )
    out.append(
        f"| **geomean** ({len(gm['kernels'])} kernels) | | | {fmt_x(gm['inflation'])} | | "
        f"{fmt_x(gm['speedup_regions'])} | **{fmt_x(gm['speedup_tapeflow'])}** | "
        f"**{fmt_x(gm['speedup_tapeflow_iso_sram'])}** | "
        f"**{fmt_x(gm['on_chip_energy_ratio'])}** | {fmt_x(gm['on_chip_memory_energy_ratio'])} | "
        f"{fmt_x(gm['total_energy_ratio'])} | | | | **{fmt_x(gm['sram_ratio'], 2)}** | |"
    )
    out.append("")
    if size != "default":
        out.append(f"At {size} sizes the tapes fit in the caches: these ratios say little "
                   "about TapeFlow (the default sizes make every tape >= 4x the L2).")
    controls = [r.kernel for r in rows if r.control]
    if controls:
        out.append(f"Controls (cache nothing, shown but excluded from the geomeans): "
                   f"{', '.join(controls)}.")  # fmt: skip
    # The >= 4x LLC claim, checked.
    big = [r for r in rows if not r.control and not r.errors]
    if big:
        small = [r for r in big if r.tape_over_l2 < LLC_FACTOR]
        per = ", ".join(f"{r.kernel} {r.tape_over_l2:.2f}x" for r in big)
        if not small:
            out.append(f"Enzyme-layout tape >= {LLC_FACTOR:g}x the last-level cache "
                       f"(L2 = {fmt_bytes(l2)}) on every kernel that caches: {per}.")
        else:
            which = "these sizes" if size != "default" else "the default sizes"
            out.append(f"NOT every Enzyme-layout tape is >= {LLC_FACTOR:g}x the last-level "
                       f"cache (L2 = {fmt_bytes(l2)}) at {which}: {per} "
                       f"(below: {', '.join(r.kernel for r in small)}).")  # fmt: skip
    out.append("")
    # Energy breakdown.
    out.append("### Energy by component (µJ)")
    out.append("")
    out.append("| kernel | variant | " + " | ".join(ENERGY_COMPONENTS) +
               " | on-chip | total | cycles |")  # fmt: skip
    out.append("|---|---|" + "---:|" * (len(ENERGY_COMPONENTS) + 3))
    for r in rows:
        for v in VARIANTS:
            s = r.variants.get(v)
            if s is None:
                continue
            comps = " | ".join(f"{s['energy_pj'].get(c, 0.0) / 1e6:,.2f}"
                              for c in ENERGY_COMPONENTS)  # fmt: skip
            out.append(f"| {r.kernel} | {LABELS[v]} | {comps} | {s['on_chip_pj'] / 1e6:,.2f} | "
                       f"{s['total_pj'] / 1e6:,.2f} | {s['cycles']:,.0f} |")  # fmt: skip
    out.append("")
    # Where the cycles go.
    most = max((s["cycles"] for r in rows for s in r.variants.values()), default=0.0)
    scale, unit_name = next((u for u in ((1e6, "millions"), (1e3, "thousands"))
                             if most >= 10 * u[0]), (1.0, "cycles"))  # fmt: skip
    from tapeflow.hwmodel.report import phase_formula

    lockstep = bool(machine.get("core", "lockstep"))
    terms = ["T_OL", "T_nOL", "T_L2", "T_DRAM", *(["T_hit"] if lockstep else []), "T_exposed",
             "T_late", "T_core"]  # fmt: skip
    phase = phase_formula(lockstep, machine.get("core", "overlap") == "max")
    out.append(f"### Cycle terms (hwmodel/model.py: T_core = sum over phases of {phase}; "
               "T_DRAM includes waiting for DMA on the shared channel; "
               f"cycles = T_core + stalls + drain), {unit_name}")  # fmt: skip
    out.append("")
    out.append("| kernel | variant | " + " | ".join(terms) + " | "
               "DMA stall | drain | cycles | DRAM MiB | DMA MiB |")  # fmt: skip
    out.append("|---|---|" + "---:|" * (len(terms) + 5))
    for r in rows:
        for v in VARIANTS:
            s = r.variants.get(v)
            if s is None:
                continue
            t = s["cycle_terms"]
            cells = " | ".join(f"{t.get(k, 0.0) / scale:,.3f}"
                               for k in (*terms, "T_dma_stall", "T_drain", "cycles"))
            out.append(f"| {r.kernel} | {LABELS[v]} | {cells} | {s['dram_bytes'] / MIB:,.2f} | "
                       f"{s['dma_bytes'] / MIB:,.2f} |")  # fmt: skip
    out.append("")
    # The sweep.
    sweep_caps = header["sweep"]
    if sweep_caps:
        out.append("### Enzyme-layout cycles vs L2 capacity (relative to the best point; "
                   "* = cache needed)")  # fmt: skip
        out.append("")
        out.append("| kernel | " + " | ".join(fmt_bytes(c) for c in sweep_caps) + " |")
        out.append("|---|" + "---:|" * len(sweep_caps))
        for r in rows:
            if not r.sweep:
                continue
            best = min(p["cycles"] for p in r.sweep)
            by = {p["l2_bytes"]: p for p in r.sweep}
            need = r.sram["enzyme_l2_needed_bytes"]
            cells = []
            for c in sweep_caps:
                p = by.get(c)
                cells.append("-" if p is None else
                             f"{p['cycles'] / best:.3f}" + ("*" if c == need else ""))  # fmt: skip
            out.append(f"| {r.kernel} | " + " | ".join(cells) + " |")
        out.append("")
    both = [r for r in rows if r.sweep and r.sweep_tapeflow]
    if both:
        out.append("### TapeFlow speedup at each L2 capacity (both designs with that L2)")
        out.append("")
        out.append("| kernel | " + " | ".join(fmt_bytes(c) for c in sweep_caps) + " |")
        out.append("|---|" + "---:|" * len(sweep_caps))
        for r in both:
            e = {p["l2_bytes"]: p["cycles"] for p in r.sweep}
            t = {p["l2_bytes"]: p["cycles"] for p in r.sweep_tapeflow}
            out.append(f"| {r.kernel} | " + " | ".join(
                fmt_x(_ratio(e[c], t[c])) if c in e and c in t else "-" for c in sweep_caps
            ) + " |")  # fmt: skip
        out.append("")
    iso = [r for r in rows if r.sram.get("iso_target_cycles") is not None]
    if iso:
        out.append("### On-chip SRAM for the same cycles (from the L2 sweeps, no threshold)")
        out.append("")
        out.append("SRAM = L1 + L2 (+ the scratchpad's capacity for TapeFlow); `> sweep` = not "
                   "reached within the sweep. Common target = the faster design's cycles at "
                   "the machine's own caches; the ratio (Enzyme SRAM / TapeFlow SRAM) is "
                   "missing where a design does not reach it, and the geomean is over the "
                   "kernels that have one.")  # fmt: skip
        out.append("")
        out.append("| kernel | Enzyme SRAM for TapeFlow's cycles | TapeFlow SRAM for Enzyme's "
                   "cycles | target cycles | Enzyme SRAM | TapeFlow SRAM | ratio |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for r in iso:
            s = r.sram

            def reach(n: int | None) -> str:
                return "> sweep" if n is None else fmt_bytes(n)

            out.append(f"| {r.kernel} | {reach(s['enzyme_sram_for_tapeflow_cycles_bytes'])} | "
                       f"{reach(s['tapeflow_sram_for_enzyme_cycles_bytes'])} | "
                       f"{s['iso_target_cycles']:,.0f} | {reach(s['iso_enzyme_sram_bytes'])} | "
                       f"{reach(s['iso_tapeflow_sram_bytes'])} | {fmt_x(s['iso_ratio'], 2)} |")
        out.append(f"| **geomean** | | | | | | **{fmt_x(gm.get('sram_iso_ratio'), 2)}** |")
        out.append("")
    if any(r.sweep_tapeflow for r in rows):
        out.append("### Whole on-chip SRAM (within the tolerance of the best): L1 + L2 needed "
                   "(+ SPM)")
        out.append("")
        out.append("| kernel | Enzyme L1+L2 needed | TapeFlow L1+L2 needed | "
                   "TapeFlow SPM capacity | "
                   "TapeFlow total | ratio |")  # fmt: skip
        out.append("|---|---:|---:|---:|---:|---:|")
        for r in rows:
            if not r.sweep_tapeflow:
                continue
            s = r.sram
            out.append(f"| {r.kernel} | {fmt_bytes(s['enzyme_cache_needed_bytes'])} | "
                       f"{fmt_bytes(s.get('tapeflow_cache_needed_bytes'))} | "
                       f"{fmt_bytes(s['tapeflow_spm_bytes'])} | "
                       f"{fmt_bytes(s.get('tapeflow_total_needed_bytes'))} | "
                       f"{fmt_x(s.get('total_ratio'), 2)} |")  # fmt: skip
        out.append(f"| **geomean** | | | | | **{fmt_x(gm.get('sram_total_ratio'), 2)}** |")
        out.append("")
    bad = [r for r in rows if not r.grads_ok]
    for r in bad:
        for n in r.errors + r.grad_notes:
            out.append(f"- **{r.kernel}**: {n}")
    if bad:
        out.append("")
    out.append(METRICS_DOC)
    return "\n".join(out) + "\n"


def salam_comparison(rows: Sequence[KernelRow], kernels: dict[str, Any],
                     ratios: dict[str, dict[int, float]], cache: int) -> list[dict[str, Any]]:
    """Suite salam: per kernel, our speedup with both designs' L2 (the cluster cache) at
    `cache` bytes (from the L2 sweeps) beside gem5-SALAM's own orig/ad total-cycle ratio
    at that cluster-cache size (`ratios`, `tapeflow.kernels.salam_ratios`)."""
    out = []
    for r in rows:
        csv = getattr(kernels.get(r.kernel), "csv", "") or r.kernel.split("/")[-1]
        e = {p["l2_bytes"]: p["cycles"] for p in r.sweep}
        t = {p["l2_bytes"]: p["cycles"] for p in r.sweep_tapeflow}
        ours = _ratio(e[cache], t[cache]) if cache in e and cache in t else None
        theirs = ratios.get(csv, {}).get(cache)
        out.append({"kernel": r.kernel, "csv": csv, "cache_bytes": cache,
                    "speedup_ours": ours, "speedup_gem5_salam": theirs,
                    "ours_over_theirs": _ratio(ours, theirs) if ours and theirs else None})
    return out


def salam_markdown(compare: Sequence[dict[str, Any]], machine: str, cache: int) -> str:
    """The summary of suite salam on one machine: our speedup beside gem5-SALAM's."""
    out = [f"### Suite salam on `{machine}`: our speedup beside gem5-SALAM's "
           f"(cluster cache = L2 = {fmt_bytes(cache)})", ""]
    out.append("gem5-SALAM's = orig / ad total cycles of its own result CSVs "
               "(benchmarks/kernels/salam/gem5_salam_results.csv); ours = Enzyme-layout / "
               "TapeFlow cycles with both designs' L2 at that size (from the L2 sweeps).")
    out.append("")
    out.append("| kernel | gem5-SALAM CSV | our speedup | gem5-SALAM speedup | ours / theirs |")
    out.append("|---|---|---:|---:|---:|")
    for c in compare:
        out.append(f"| {c['kernel']} | {c['csv']} | {fmt_x(c['speedup_ours'])} | "
                   f"{fmt_x(c['speedup_gem5_salam'])} | {fmt_x(c['ours_over_theirs'])} |")
    both = [c for c in compare if c["speedup_ours"] and c["speedup_gem5_salam"]]
    out.append(f"| **geomean** ({len(both)} with both) | | "
               f"**{fmt_x(geomean(c['speedup_ours'] for c in both))}** | "
               f"**{fmt_x(geomean(c['speedup_gem5_salam'] for c in both))}** | "
               f"{fmt_x(geomean(c['ours_over_theirs'] for c in both))} |")
    return "\n".join(out) + "\n"


SUMMARY_COLUMNS = (
    ("speedup_tapeflow", "TapeFlow speedup", 2),
    ("speedup_tapeflow_iso_sram", "TapeFlow speedup (iso-SRAM)", 2),
    ("speedup_regions", "regions speedup", 2),
    ("on_chip_energy_ratio", "on-chip energy", 2),
    ("on_chip_memory_energy_ratio", "on-chip mem. energy", 2),
    ("total_energy_ratio", "total energy", 2), ("sram_ratio", "SRAM ratio (tolerance)", 2),
    ("sram_iso_ratio", "SRAM ratio (same cycles)", 2),
)  # fmt: skip
"""Geomeans shown side by side per machine (`summary_markdown`): key, header, digits."""


def summary_markdown(machines: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """One row of geomeans per machine (name, `geomeans(...)`), after the per-machine tables,
    and the worst TapeFlow speedup of any kernel (controls included: no harm)."""
    out = ["## Summary: geometric means per machine", ""]
    out.append("| machine | kernels | " + " | ".join(h for _, h, _ in SUMMARY_COLUMNS)
               + " | worst TapeFlow speedup |")  # fmt: skip
    out.append("|---|---:|" + "---:|" * (len(SUMMARY_COLUMNS) + 1))
    for name, gm in machines:
        cells = " | ".join(fmt_x(gm.get(k), d) for k, _, d in SUMMARY_COLUMNS)
        worst = fmt_x(gm.get("worst_speedup_tapeflow"), 3)
        if gm.get("worst_kernel"):
            worst += f" ({gm['worst_kernel']})"
        out.append(f"| `{name}` | {len(gm['kernels'])} | {cells} | {worst} |")
    return "\n".join(out) + "\n"


def to_json(rows: Sequence[KernelRow], gm: dict[str, Any], header: dict[str, Any],
            machine: Any) -> dict[str, Any]:  # fmt: skip
    return {
        "header": header,
        "machine": machine.raw,
        "geomean": gm,
        "kernels": [
            {
                "kernel": r.kernel,
                "control": r.control,
                "gradients_identical": r.grads_ok,
                "gradient_notes": r.grad_notes,
                "errors": r.errors,
                "tape_bytes": r.tape_bytes,
                "primal_bytes": r.primal_bytes,
                "inflation": r.inflation,
                "tape_over_l2": r.tape_over_l2,
                "speedup": r.speedup,
                "energy_ratio_tapeflow": r.energy_ratio,
                "energy_ratio_regions": r.energy_ratio_regions,
                "sram": r.sram,
                "sweep": r.sweep,
                "sweep_tapeflow": r.sweep_tapeflow,
                "variants": r.variants,
            }
            for r in rows
        ],
        "definitions": METRICS_DOC,
    }


# ------------------------------------------------------------------------------------------
# Plots


def write_plots(rows: Sequence[KernelRow], gm: dict[str, Any], out_dir: Any,
                suffix: str = "") -> list[str]:  # fmt: skip
    """speedup.png, energy.png, sram.png in `out_dir` (`suffix` before `.png`, e.g. the
    machine's name); returns the paths. Legends sit outside the axes, so they never
    cover a bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths: list[str] = []
    names = [r.kernel + (" (ctrl)" if r.control else "") for r in rows]
    x = np.arange(len(rows) + 1)
    labels = [*names, "geomean"]

    def save(fig: Any, name: str) -> None:
        p = f"{out_dir}/{name}{suffix}.png"
        fig.savefig(p, dpi=120, bbox_inches="tight")
        plt.close(fig)
        paths.append(p)

    # -- speedup: regions only, TapeFlow, and TapeFlow against the Enzyme layout given the
    #    same on-chip SRAM (iso-SRAM)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels) + 2), 4))
    bars = (("regions", "regions only", "#9ecae1"), ("tapeflow", "TapeFlow", "#08519c"),
            ("tapeflow_iso_sram", "TapeFlow, Enzyme layout with the same SRAM (iso-SRAM)",
             "#fd8d3c"))  # fmt: skip
    w = 0.27
    for i, (key, label, color) in enumerate(bars):
        vals = [r.speedup.get(key) or 0.0 for r in rows]
        vals.append(gm.get(f"speedup_{key}") or 0.0)
        ax.bar(x + (i - 1) * w, vals, w, label=label, color=color)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("speedup over the Enzyme layout (cycles)")
    ax.set_title("Speedup (geomean over kernels that cache; ctrl = control)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=3, fontsize=8)
    save(fig, "speedup")

    # -- energy breakdown: on-chip (normalised to the Enzyme layout's on-chip energy) and
    #    total (normalised to its total); components that are 0 everywhere are named in
    #    the title instead of drawn
    colors = {"compute": "#fdae6b", "L1": "#74c476", "L2": "#31a354", "SPM": "#6baed6",
              "DMA": "#9e9ac8", "leakage": "#e6550d", "DRAM": "#969696"}  # fmt: skip
    used = [c for c in ENERGY_COMPONENTS
            if any(s["energy_pj"].get(c, 0.0) > 0 for r in rows for s in r.variants.values())]
    unused = [c for c in ENERGY_COMPONENTS if c not in used]
    fig, axes = plt.subplots(2, 1, figsize=(max(7, 1.3 * len(rows) + 2), 8.5))
    w = 0.27
    xs = np.arange(len(rows))
    panels = (
        ("on_chip_pj", [c for c in used if c != "DRAM"], "on-chip energy / Enzyme-layout on-chip"),
        ("total_pj", used, "total energy / Enzyme-layout total"),
    )  # fmt: skip
    for ax, (norm, comps, ylabel) in zip(axes, panels, strict=True):
        top = 0.0
        for j, v in enumerate(VARIANTS):
            bottom = np.zeros(len(rows))
            for comp in comps:
                vals = []
                for r in rows:
                    s, base = r.variants.get(v), r.variants.get("enzyme")
                    ok = s and base and base[norm]
                    vals.append(s["energy_pj"].get(comp, 0.0) / base[norm] if ok else 0.0)
                ax.bar(xs + (j - 1) * w, vals, w * 0.95, bottom=bottom, color=colors[comp],
                       label=comp if j == 0 else None)  # fmt: skip
                bottom += np.array(vals)
            for xi, b in zip(xs, bottom, strict=True):
                ax.text(xi + (j - 1) * w, b, "ERT"[j], ha="center", va="bottom", fontsize=7)
            top = max(top, float(bottom.max(initial=0.0)))
        ax.set_ylim(0, top * 1.15 or 1.0)  # room for the E/R/T labels under the title
        ax.set_xticks(xs, names, rotation=30, ha="right")
        ax.set_ylabel(ylabel)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    axes[0].set_title("Energy by component (E = Enzyme layout, R = regions only, T = TapeFlow)"
                      + (f"; 0 everywhere: {', '.join(unused)}" if unused else ""),
                      fontsize=10, pad=12)  # fmt: skip
    fig.tight_layout()
    save(fig, "energy")

    # -- SRAM: each design's whole on-chip SRAM needed (TapeFlow's includes its
    #    scratchpad; its high-water mark is marked), then one small panel per kernel of
    #    cycles vs on-chip SRAM from the two L2 sweeps
    swept = [r for r in rows if r.sweep and r.variants.get("enzyme", {}).get("cycles")]
    cols = 4
    grid = (len(swept) + cols - 1) // cols
    fig = plt.figure(figsize=(14, 4.2 + 2.6 * grid))
    sub = fig.add_gridspec(1 + grid, cols, height_ratios=[1.6] + [1] * grid)
    a1 = fig.add_subplot(sub[0, :])
    need = [(r.sram["enzyme_cache_needed_bytes"] or 0) / KIB for r in rows]
    tneed = [(r.sram.get("tapeflow_sram_needed_bytes") or 0) / KIB for r in rows]
    hwm = [(r.sram["tapeflow_spm_high_water_bytes"] or 0) / KIB for r in rows]
    a1.bar(xs - 0.2, need, 0.4, label="Enzyme layout: L1 + L2 needed (within 5% of best)",
           color="#31a354")  # fmt: skip
    a1.bar(xs + 0.2, tneed, 0.4, label="TapeFlow: L1 + L2 needed + scratchpad capacity",
           color="#08519c")  # fmt: skip
    a1.scatter(xs + 0.2, [h if h else np.nan for h in hwm], marker="_", s=200, color="#fd8d3c",
               zorder=3, label="TapeFlow: scratchpad high-water mark")  # fmt: skip
    a1.set_yscale("log")
    a1.set_xticks(xs, names, rotation=30, ha="right")
    a1.set_ylabel("KiB (log)")
    a1.set_title(f"Whole on-chip SRAM needed (geomean ratio {fmt_x(gm.get('sram_ratio'), 2)})")
    a1.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    for n, r in enumerate(swept):
        ax = fig.add_subplot(sub[1 + n // cols, n % cols])
        base = r.variants["enzyme"]["cycles"]
        spm = r.sram.get("tapeflow_spm_bytes") or 0
        ax.plot([p["cache_bytes"] / KIB for p in r.sweep], [p["cycles"] / base for p in r.sweep],
                marker="o", ms=3, color="#31a354", label="Enzyme layout")  # fmt: skip
        if r.sweep_tapeflow:
            ax.plot([(p["cache_bytes"] + spm) / KIB for p in r.sweep_tapeflow],
                    [p["cycles"] / base for p in r.sweep_tapeflow], marker="s", ms=3,
                    color="#08519c", ls="--", label="TapeFlow")  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_title(r.kernel, fontsize=9)
        ax.tick_params(labelsize=7)
        if n % cols == 0:
            ax.set_ylabel("cycles / Enzyme at\nthe machine's caches", fontsize=8)
        if n == 0:
            ax.legend(fontsize=7)
    if swept:
        fig.text(0.5, 0.005, "on-chip SRAM: L1 + L2 (+ the scratchpad's capacity for TapeFlow), "
                 "KiB, log", ha="center", fontsize=9)  # fmt: skip
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    save(fig, "sram")
    return paths
