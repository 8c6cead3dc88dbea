"""The evaluation driver behind `tapeflow-bench`: every benchmark kernel each way (`VARIANTS`).

One job (`Job`, run by `run_job`, possibly in a worker process) compiles one kernel one
way, runs its gradient `@<name>_grad` on the kernel's own inputs (`make_inputs(name, size,
seed)`, zero shadows, seed 1.0) on the compiled fast path (`hwmodel.fastsim`; the op-by-op
model when the compiler rejects an op), and returns the hardware model's report and every
memref argument after the run (the gradients). A job with a `sweep` (the Enzyme layout's,
by default) runs the program ONCE for the machine and every swept L2 capacity
(`simulate_fast_many`: each capacity's hardware model hears the same run, so the sweep
costs one cache simulation per point, not one execution). A job with an `spm_sweep`
(TapeFlow's, with `--spm-sweep`) runs at each scratchpad too: the scratchpad changes the
program, so each distinct program is compiled once (transforms/analysis/budget.py tells
which capacities give the same one) and runs once for all its capacities. `tapeflow-bench`
runs the jobs of one kernel as one task (`run_jobs_shared`): nothing is compiled or run twice, the
machines share each run, and variants that compile to the same IR share it too.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tapeflow.eval.jobs import (
    LABELS,
    VARIANTS,
    Job,
    build_module,
    default_raw,
    ir_key,
    kernel_of,
    kernels,
    machine_from_raw,
    pipeline_key,
    spm_job,
)
from tapeflow.eval.pool import Pool, progress_bar, run_unordered
from tapeflow.hwmodel.compiled.limits import UnsupportedOpError
from tapeflow.hwmodel.fastsim import compiled
from tapeflow.simulate import simulate, simulate_fast_many
from tapeflow.collector import fewer_collections
from tapeflow.transforms.analysis.budget import BudgetRecord, record_budget
from tapeflow.transforms.pipeline import TapeFlowPipelinePass


def simulate_many(module: Any, entry: str, make_args: Any, machines: Sequence[Any],
                   backend: str, timings: dict[str, float] | None = None,
                   ) -> tuple[list[Any], str]:  # fmt: skip
    """One `SimResult` per machine, from ONE compiled run (`simulate_fast_many`), or from
    op-by-op runs when the fast-path compiler rejects an op. `timings` (when given) gets
    `codegen_s` (compiling the IR to Python), `run_s` (the run and every machine's
    model) and `run_cpu_s` (its CPU seconds)."""
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
    jobs of one kernel): each pipeline is compiled once; jobs whose IR is the same
    (`ir_key`; the controls: an empty tape gives every variant the same program) share a
    simulation; and each distinct program runs ONCE for every machine and swept L2
    capacity its jobs need (`simulate_fast_many`), so the machines of a run share it, not
    only a sweep's capacities. A shared run that fails is redone job by job, so that an
    error stays with the job that causes it. Never raises (errors come back per job).

    Returns `results` (one per job, in order, as `run_job`'s), `runs` (one record per
    simulation run: the jobs it served, its machine count, codegen and run seconds),
    `compile_s` and `compile_cpu_s` (every pipeline's), and the task's `wall_s`, `cpu_s`
    and worker `pid`. Jobs of the controls share one run, so their bit-identical
    gradients follow from their identical IR. Python's collector runs less often meanwhile
    (`fewer_collections`: 13% of the tasks' CPU time went to it)."""
    with fewer_collections():
        return _run_jobs_shared(jobs)


def _run_jobs_shared(asked: Sequence[Job]) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    jobs = list(asked)
    owners: dict[int, int] = {}  # a scratchpad sweep's point (job index) -> its job's index
    for i, job in enumerate(asked):
        for capacity in job.spm_sweep:
            owners[len(jobs)] = i
            jobs.append(spm_job(job, capacity))
    budgets: dict[int, tuple[BudgetRecord, Any]] = {}  # a swept job -> its compile's record
    alike: set[int] = set()  # points whose run is their job's (below)
    results: list[dict[str, Any]] = [{} for _ in jobs]
    modules: dict[tuple[str, ...], tuple[Any, Any]] = {}  # compile key -> (module, ir_key)
    compile_s: dict[tuple[str, ...], tuple[float, float]] = {}  # key -> (wall, cpu)
    shared: dict[tuple[Any, ...], list[int]] = {}
    keys: list[tuple[Any, ...]] = [()] * len(jobs)  # each job's compile key, computed once
    parsed: dict[Any, Any] = {}  # each kernel parsed and differentiated once (build_module)
    cleaned: dict[Any, Any] = {}  # ir_key before the cleanup -> the module (build_module)
    loaded: dict[tuple[str, int | None], Any] = {}  # each machine validated once
    for i, job in enumerate(jobs):
        try:
            raw = job.machine or default_raw()
            passes = job.passes()  # loads the job's machine: a bad one fails this job only
            key = keys[i] = _compile_key(job, passes)
            if owners.get(i) in budgets:  # the same program as a capacity compiled already?
                probe, own = budgets[owners[i]]
                replay = probe.key(*passes[0].costs_and_budget())
                if replay is not None:
                    owner = keys[owners[i]]
                    key = keys[i] = owner if replay == own else (owner, replay)
                if replay == own and not probe.layers:
                    # Its job's program, which layers nothing, so streams nothing and never
                    # touches the scratchpad: the capacity changes no figure of its run.
                    alike.add(i)
                    continue
            if key not in modules:
                t, c = time.perf_counter(), time.process_time()
                with record_budget() as probe:
                    module = build_module(job, passes, parsed, cleaned)
                if job.spm_sweep and isinstance(passes[0], TapeFlowPipelinePass):
                    budgets[i] = (probe, probe.key(*passes[0].costs_and_budget()))
                known = [ir for m, ir in modules.values() if m is module]  # a cleanup shared
                modules[key] = (module, known[0] if known else ir_key(module))
                compile_s[key] = (time.perf_counter() - t, time.process_time() - c)
        except BaseException as e:
            results[i] = _job_error(job, e)
            continue
        ir = modules[key][1]
        window = raw["core"]["window_ops"]  # one run needs one phase window
        shared.setdefault((ir, job.size, job.seed, job.backend, window), []).append(i)
    records: list[dict[str, Any]] = []
    for members in shared.values():
        group = [jobs[i] for i in members]
        module = modules[keys[members[0]]][0]
        try:
            outs, record = _run_shared(module, group, [compile_s[keys[i]] for i in members],
                                       loaded)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            if len(members) == 1:
                outs, record = [_job_error(group[0], e)], None
            else:  # redo each job alone: the error goes to the job that has it
                # (a swept job's points are jobs of this group or of their own)
                alone = [run_jobs_shared([replace(job, spm_sweep=())]) for job in group]
                outs = [a["results"][0] for a in alone]
                records += [r for a in alone for r in a["runs"]]
                record = None
        for i, out in zip(members, outs, strict=True):
            results[i] = out
        if record is not None:
            records.append(record)
        if group[0].progress_lines and len(shared) > 1:  # a Dask worker shares our stderr
            variants = ", ".join(dict.fromkeys(LABELS.get(j.variant, j.variant) for j in group))
            failed = " FAILED" if any(results[i].get("error") for i in members) else ""
            print(f"tapeflow-bench: {group[0].kernel}: {variants} done{failed} "
                  f"({time.perf_counter() - t0:.0f} s into its task)",
                  file=sys.stderr, flush=True)  # fmt: skip
    for i in alike:
        results[i] = results[owners[i]]
    for i, owner in owners.items():
        if not results[owner].get("error"):
            results[owner].setdefault("spm_sweep", []).append(
                _spm_point(jobs[i], results[i], results[owner]))
    return {"kernels": sorted({job.kernel for job in jobs}), "results": results[:len(asked)],
            "runs": records, "compile_s": sum(w for w, _ in compile_s.values()),
            "compile_cpu_s": sum(c for _, c in compile_s.values()),
            "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
            "pid": os.getpid()}  # fmt: skip


def _compile_key(job: Job, passes: Sequence[Any]) -> tuple[Any, ...]:
    """Equal keys, the same program: the passes (`job.passes()`) with their options and
    machine costs."""
    return (job.kernel, job.size, pipeline_key(passes), job.c_source, job.file_kernel)


def _spm_point(job: Job, res: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """One point of a job's scratchpad sweep (`Job.spm_sweep`): `job` (`spm_job`), run as
    `res`; its gradients bit-identical to the swept job's own (`own`) or not."""
    point: dict[str, Any] = {"spm_bytes": job.spm_bytes, "error": res.get("error")}
    if point["error"]:
        return point
    r = res["report"]
    e = r["energy"]
    grads, mine = own["grads"], res["grads"]
    same = grads.keys() == mine.keys() and all(bit_identical(a, mine[k]) for k, a in grads.items())
    return {**point, "cycles": r["cycles"], "energy_pj": dict(e["components_pj"]),
            "on_chip_pj": e["on_chip_pj"], "on_chip_memory_pj": e["on_chip_memory_pj"],
            "total_pj": e["total_pj"], "on_chip_sram_bytes": r["sram"]["on_chip_bytes"],
            "spm_high_water_bytes": r["sram"]["spm_high_water_bytes"],
            "dram_bytes": r["dram"]["bytes_read"] + r["dram"]["bytes_written"],
            "gradients_identical": same}  # fmt: skip


def job_name(job: Job) -> str:
    """`machine/variant` (with the scratchpad for a point of a scratchpad sweep)."""
    name = f"{job.machine_label or 'default'}/{job.variant}"
    return f"{name}@spm={job.spm_bytes}" if job.spm_point else name


def _job_header(job: Job) -> dict[str, Any]:
    return {"kernel": job.kernel, "variant": job.variant, "spec": job.spec,
            "machine": job.machine_label, "error": None}  # fmt: skip


def _job_error(job: Job, e: BaseException) -> dict[str, Any]:
    """The job's result for an exception being handled (reported per job by the driver)."""
    if isinstance(e, KeyboardInterrupt):
        raise e
    return {**_job_header(job), "error": f"{type(e).__name__}: {e}".strip(),
            "traceback": traceback.format_exc()}  # fmt: skip


def _job_machines(job: Job, loaded: dict[tuple[str, int | None], Any]) -> dict[int, Any]:
    """L2 capacity -> machine: the job's own machine first, then its sweep's others.
    `loaded` keeps the machines validated for the task's other jobs (by table and L2)."""
    raw = job.machine or default_raw()
    text = json.dumps(raw, sort_keys=True)

    def machine(cap: int | None) -> Any:
        if (text, cap) not in loaded:
            loaded[text, cap] = machine_from_raw(raw, cap)
        return loaded[text, cap]

    own = machine(None)
    out = {own.l2.size: own}
    for cap in job.sweep:
        if cap not in out:
            out[cap] = machine(cap)
    return out


def _run_shared(module: Any, jobs: Sequence[Job], compile_s: Sequence[tuple[float, float]],
                loaded: dict[tuple[str, int | None], Any],
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:  # fmt: skip
    """Jobs with the same program, inputs and backend: ONE run for the union of their
    machines (each distinct machine table once); each job's result from its machines.
    `compile_s`: each job's compile (wall, CPU) seconds; `loaded`: as `_job_machines`'."""
    t0, c0 = time.perf_counter(), time.process_time()
    first = jobs[0]
    kernel = kernel_of(first)
    per_job = [_job_machines(job, loaded) for job in jobs]
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
    sims, path = simulate_many(
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
    names_of = [job_name(job) for job in jobs]
    outs = []
    for job, mine, slot, me, (compile_wall, compile_cpu) in zip(
            jobs, per_job, slots, names_of, compile_s, strict=True):  # fmt: skip
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
        outs.append({
            **_job_header(job), "report": report, "path": path, "sweep": sweep,
            "grads": grads, "compile_s": compile_wall,
            "wall_s": compile_wall + wall, "cpu_s": compile_cpu + cpu,
            "shared_with": [n for n in names_of if n != me],
        })  # fmt: skip
    record = {"kernel": first.kernel, "jobs": names_of, "machines": len(machines),
              "path": path, "wall_s": wall, "cpu_s": cpu, **timings}  # fmt: skip
    return outs, record


def argument_names(name: str) -> list[str]:
    """Names of `@<name>_grad`'s arguments: `A`, `dA` (shadow), ..., `seed`."""
    return kernels()[name].argument_names()


# ------------------------------------------------------------------------------------------
# Tasks: the jobs of one kernel together


KERNEL_CPU_S = {"mlp": 242, "lstm": 198, "conv2d": 141, "gemm": 80, "ragged_rnn": 54,
                "pwl": 47, "jacobi2d": 34, "softmax_ce": 20, "mass_spring": 18, "ba": 6,
                "pairwise": 2}  # fmt: skip
"""CPU seconds of each kernel's task in the default two-machine run (`--timings`, commit
16d97ce, 2026-12-03): only their ORDER is used, to start the longest tasks first so that
the workers finish together."""


def kernel_tasks(jobs: Sequence[Any], workers: int = 1) -> list[tuple[Any, ...]]:
    """The jobs grouped into tasks (`run_jobs_shared`: one compile per
    pipeline, one run per distinct program for every machine), longest first: one task
    per kernel, or per (kernel, variant) when there are fewer than two kernels per worker
    (then the workers have enough tasks to share, and only the controls' identical
    variants run more than once). An unknown kernel (a C twin of another name) counts as
    a middle one; the Enzyme layout and TapeFlow (which carry the sweeps) before the others."""
    kernels = list(dict.fromkeys(job.kernel for job in jobs))
    per_variant = len(kernels) < 2 * workers
    tasks: dict[tuple[str, str], list[Any]] = {}
    for job in jobs:
        tasks.setdefault((job.kernel, job.variant if per_variant else ""), []).append(job)
    middle = sorted(KERNEL_CPU_S.values())[len(KERNEL_CPU_S) // 2]
    order = sorted(tasks, key=lambda k: (-KERNEL_CPU_S.get(k[0], middle),
                                         k[1] not in ("", "enzyme", "tapeflow")))
    return [tuple(tasks[k]) for k in order]


def run_jobs(jobs: Sequence[Any], workers: int, progress: bool,
             timings: dict[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Every job's result (the tasks of `kernel_tasks`, on a Dask LocalCluster when
    `workers` > 1).
    `timings` (when given) gets the cluster's start and stop times, each task's record
    and the workers' CPU seconds."""
    tasks = kernel_tasks(jobs, workers)
    terminal = sys.stderr.isatty()
    bar = progress_bar(len(tasks), progress and terminal, "tapeflow-bench", unit="task")
    results: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []

    def done(task: dict[str, Any]) -> None:
        records.append({k: v for k, v in task.items() if k != "results"})
        results.extend(task["results"])
        failed = sum(1 for r in task["results"] if r.get("error"))
        what = (f"{','.join(task['kernels'])}: {len(task['runs'])} simulation run(s), "
                f"{task['wall_s']:.0f} s" + (f", {failed} FAILED" if failed else ""))
        if bar is not None:
            bar.set_postfix_str(what)
            bar.update(1)
        elif progress:  # off a terminal: one line per finished task, no bar redraws
            print(f"tapeflow-bench: {len(records)}/{len(tasks)} tasks done ({what})",
                  file=sys.stderr, flush=True)  # fmt: skip

    t0 = time.perf_counter()
    try:  # the sweep engine's pool: in process for one worker, else a Dask LocalCluster
        with Pool(workers=min(workers, len(tasks))) as pool:
            t1 = time.perf_counter()
            for task in run_unordered(pool, run_jobs_shared, tasks):
                done(task)
            t2 = time.perf_counter()
            worker_cpu = pool.worker_cpu_s()
        t3 = time.perf_counter()
    finally:
        if bar is not None:
            bar.close()
    if timings is not None:
        timings.update(cluster_start_s=t1 - t0, tasks_s=t2 - t1, cluster_stop_s=t3 - t2,
                       tasks=records, worker_cpu_s=worker_cpu)  # fmt: skip
    return results


# ------------------------------------------------------------------------------------------
# Comparing gradients


def compare_gradients(results: dict[str, dict[str, Any]]) -> tuple[bool, list[str]]:
    """Bit-for-bit comparison of every variant's final arguments with the Enzyme layout's:
    each of `VARIANTS` (one missing is a difference) and any other run in `results` (the
    same variant with other options). Returns (identical, messages)."""
    base = results.get("enzyme")
    if base is None or base.get("grads") is None:
        return False, ["no Enzyme-layout result to compare with"]
    ok = True
    notes: list[str] = []
    for variant in [v for v in dict.fromkeys([*VARIANTS[1:], *results]) if v != "enzyme"]:
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
            if not bit_identical(a, b):
                ok = False
                if a.shape == b.shape and a.size:
                    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
                    same = (_bytes(a) == _bytes(b)).all(axis=1) if a.dtype == b.dtype \
                        else np.zeros(a.size, bool)  # fmt: skip
                    first = int(np.argmin(same))
                    at = "".join(f"[{i}]" for i in np.unravel_index(first, a.shape))
                    mine, enzyme = b.flat[first].item(), a.flat[first].item()
                    notes.append(f"{variant}: {key} differs from the Enzyme layout's in "
                                 f"{a.size - int(same.sum())} of {a.size} elements (max "
                                 f"|diff| {float(np.nanmax(diff)):.3g}; first {key}{at}: "
                                 f"{mine!r}, Enzyme {enzyme!r})")  # fmt: skip
                else:
                    notes.append(f"{variant}: {key} has shape {b.shape}, Enzyme {a.shape}")
    return ok, notes


def bit_identical(a: np.ndarray, b: np.ndarray) -> bool:
    """The same shape, element type and bits."""
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _bytes(a: np.ndarray) -> np.ndarray:
    """`a`'s elements in row-major order, one row of bytes each."""
    return np.ascontiguousarray(a).reshape(a.size).view(np.uint8).reshape(a.size, -1)
