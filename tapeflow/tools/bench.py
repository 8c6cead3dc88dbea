"""`tapeflow-bench`: every benchmark kernel compiled three ways and simulated on one machine.

    tapeflow-bench                          # default sizes, all kernels, both machines
    tapeflow-bench --quick                  # small sizes (seconds)
    tapeflow-bench --machine accel-salam    # one machine (a preset name or a TOML file)
    tapeflow-bench --kernels gemm,lstm --json results.json --out bench-out
    tapeflow-bench --set dram.energy_pj_per_byte=64 --spm-bytes 16384

The logic lives in `tapeflow.bench`; this is the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_DESCRIPTION = """\
Compiles every kernel of the suites (--suite: bundled, the eleven kernels of
benchmarks/kernels, by default; salam, gem5-SALAM's AD benchmarks in C) or of your own
kernel files (--kernels k.c,k.mlir), default sizes, three ways from the
same reverse-mode AD output (tapeflow-autodiff, min-tape policy), for each machine
(default: the presets default-45nm, a CPU, and accel-salam, a gem5-SALAM-like
accelerator cluster; one table per machine, then a summary of the geomeans and of the
worst TapeFlow speedup):
  Enzyme layout  tapeflow-autodiff,tapeflow-lower-tape   (one DRAM array per cached value)
  regions only   tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions
  TapeFlow       tapeflow{spm-bytes=S tile-bytes=T depth=D}
runs each gradient on the hardware model (compiled fast path) with the same machine and
the kernel's own inputs, checks that the three give bit-identical gradients (every memref
argument after the run), and reports per kernel and as geometric means: speedup over the
Enzyme layout (cycles), on-chip / on-chip-memory / total energy ratios with a breakdown
by component, the speedup at equal on-chip SRAM (iso-SRAM: the Enzyme layout's L2 grown
to TapeFlow's L1 + L2 + scratchpad), whole-chip on-chip SRAM needed (each design's
smallest L1 + L2 of its L2 sweep within 5% of its best, plus the scratchpad's capacity
for TapeFlow; the scratchpad's high-water mark beside it) and their ratio, the SRAM
each design needs for the same cycles (from both designs' L2 sweeps), tape bytes, tape /
L2 and working-set inflation; for suite salam, gem5-SALAM's own speedup beside ours. Kernels that cache nothing (controls) are
shown but excluded from the geometric means.
"""

_EPILOG = """\
output:
  stdout     a markdown report, one part per suite and machine: the main table, energy by
             component, the cache sweep, definitions (with --json -, the JSON goes to
             stdout and the table to stderr); suite salam adds a table of our speedup
             beside gem5-SALAM's at the --salam-cache cluster-cache size
  --out DIR  results.md, results.json, speedup.png, energy.png, sram.png (default
             bench-out/, git-ignored); with several machines each plot is named
             speedup-<machine>.png etc. (-<suite> added for suites other than
             bundled); results.json holds one entry per machine and suite under
             "machines" and their geomeans under "summary" ("<machine> (<suite>)")
  --json F   the same JSON as DIR/results.json, also written to F ('-' = stdout)
  progress   on stderr: on a terminal a progress bar (tqdm), one step per task (a kernel
             with all its variants and machines: "tasks" below); otherwise one line
             per finished task

the cache sweep: the Enzyme layout's and TapeFlow's gradients run once for every machine
and every L2 capacity in --sweep (hwmodel.fastsim.simulate_fast_many: one hardware model
per machine and capacity hears the same run, so a point costs one cache simulation, not
one execution). L1 stays at the machine's size; the default sweep is L2 = max(4 KiB, L1)
doubling up to 4 MiB. Each machine is loaded once, by the driver, and every run gets that
same description.

tasks: one per kernel, longest first (tapeflow.bench.run_jobs_shared): each pipeline is
compiled once, and each distinct program (the controls' three variants are one) runs once
for all the machines; one per (kernel, variant) when there are fewer than two kernels per
worker. --timings prints where the wall and CPU time went.

the report checks that the default sizes make the Enzyme-layout tape at least 4x the
machine's L2 (last-level cache) on every kernel that caches, and says so per kernel.

time: the default run (two machines) takes several minutes on an idle 2-core machine
(see docs/RESULTS.md for the measured time); --quick a few seconds per machine.

exit status: 0 when every variant ran and every kernel's gradients are bit-identical
across the three variants; 1 otherwise (the table marks the kernel, the reason is
printed) or on a usage error (unknown kernel, bad machine key: `error: ...`).
"""


def _parser(kernel_names: Sequence[str]) -> argparse.ArgumentParser:
    from tapeflow.bench import METRICS_DOC

    p = argparse.ArgumentParser(
        prog="tapeflow-bench",
        description=_DESCRIPTION,
        epilog=_EPILOG + "\n" + METRICS_DOC + "\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true",
                   help="small kernel sizes (benchmarks/kernels/small, seconds per kernel); "
                   "the tape then fits in cache, so the numbers mean little")  # fmt: skip
    p.add_argument("--size", choices=("small", "default"), default=None,
                   help="kernel size (default: default, or small with --quick)")  # fmt: skip
    p.add_argument("--suite", metavar="S,...", default="bundled",
                   help="kernel suites: bundled (the eleven kernels, default), salam "
                   "(gem5-SALAM's AD benchmarks in C, benchmarks/kernels/salam/, with "
                   "gem5-SALAM's own speedups beside ours), both: bundled,salam, or all: "
                   "every suite that has kernels (scripts/bench's default)")
    p.add_argument("--kernels", metavar="A,B", default=None,
                   help=f"only these kernels of the suites (bundled: "
                        f"{', '.join(kernel_names)}), or kernel files: path/k.c or "
                        "path/k.mlir runs the function marked for differentiation "
                        "(tapeflow.autodiff, or handed to __enzyme_autodiff) of that file; "
                        "a C file named after a bundled kernel (gemm.c) is its C twin, "
                        "compiled with the kernel's sizes and given the kernel's inputs")
    p.add_argument("--exclude", metavar="A,B", default="",
                   help="leave these kernels out (a suite kernel as NAME or SUITE/NAME)")
    p.add_argument("--inputs", action="append", default=[], metavar="data.npz|P=a.npy",
                   help="arrays for a kernel file's arguments, as tapeflow-run --inputs "
                   "(default: tapeflow-run's seeded fill rule); repeatable")
    from tapeflow.frontends.c import add_c_arguments

    # a kernel file's own -D/-I, carried to the workers (a C twin gets its kernel's sizes)
    add_c_arguments(p, "a kernel file k.c")
    p.add_argument("--salam-cache", type=int, default=16, metavar="KIB",
                   help="cluster-cache (L2) size in KiB at which suite salam's speedups are "
                   "put beside gem5-SALAM's (16); added to the sweep")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="worker processes of a Dask LocalCluster, as tapeflow-sweep's "
                   f"(default: nproc = {os.cpu_count() or 1} with the sweep extra, Dask "
                   "distributed; 1 without it; 1 runs in-process)")  # fmt: skip
    p.add_argument("--out", default="bench-out", metavar="DIR",
                   help="output folder for results.md/json and the PNG plots (bench-out)")
    p.add_argument("--json", metavar="FILE", default=None,
                   help="also write the JSON results to FILE ('-': stdout)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--machine", action="append", default=None, metavar="NAME|M.toml",
                   help="a machine: a preset name (default-45nm, accel-salam, dram-hbm2, ...) or "
                   "a TOML file with the keys to change from hwmodel/defaults.toml; repeat "
                   "it or give A,B for several, 'all' for every machine of the default run "
                   "(default: default-45nm and accel-salam)")  # fmt: skip
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one machine key, e.g. l2.size=524288 (repeatable); TapeFlow's "
                   "cost model decides for the machine so changed")
    p.add_argument("--spm-bytes", type=int, default=None, metavar="N",
                   help="TapeFlow's scratchpad budget (default: the machine's spm.size)")
    p.add_argument("--tile-bytes", type=int, default=0, metavar="T",
                   help="TapeFlow's tile cap in bytes (0: as large as the budget allows)")
    p.add_argument("--depth", type=int, default=2, metavar="D",
                   help="TapeFlow's tile buffers / prefetch depth (2: double buffering)")
    p.add_argument("--sweep", metavar="KIB,...", default=None,
                   help="L2 capacities in KiB for the cache sweeps (default: max(4 KiB, L1) "
                   "doubling up to 4096; powers of two; 'none' disables it); each machine's "
                   "own L2 is always included")  # fmt: skip
    p.add_argument("--sweep-tapeflow", action=argparse.BooleanOptionalAction, default=True,
                   help="also sweep TapeFlow's L2 (same run, one more cache simulation per "
                   "point; on by default): the SRAM each design needs for the same cycles, "
                   "and L1 + L2 needed (+ the scratchpad for TapeFlow)")  # fmt: skip
    p.add_argument("--tolerance", type=float, default=5.0, metavar="PCT",
                   help="'cache needed' = smallest capacity within PCT%% of the best (5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the kernels' inputs (0)")
    p.add_argument("--backend", choices=("auto", "numba", "python"), default="auto",
                   help="cache simulator backend (auto: numba when installed)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--timings", action="store_true",
                   help="print where the time went on stderr: wall seconds per phase, CPU "
                   "of the driver and the workers, each task and simulation run, and the "
                   "workers' load balance")  # fmt: skip
    return p


def _is_file(entry: str) -> bool:
    return entry.endswith((".c", ".mlir")) or "/" in entry


def kernel_table(text: str | None, suites_text: str, inputs: Sequence[str], size: str,
                 clang_args: Sequence[str] = ()) -> dict[str, tuple[str, Any, str]]:  # fmt: skip
    """`--suite` and `--kernels`: label -> (suite, kernel, C twin file), in run order.
    Suite kernels are named by their name (suite salam's as `salam/<name>`); kernel files
    are suite `files` (a C one compiled with `clang_args`, `-D`/`-I`). Raises `ToolError`
    on an unknown suite or kernel, a missing file."""
    from tapeflow import kernels as registry
    from tapeflow.diagnostics import ToolError

    suites = [s.strip() for s in suites_text.split(",") if s.strip()]
    if "all" in suites:  # every suite that has kernels
        suites = [s for s in registry.SUITES if s != "salam" or registry.salam_available()]
    bad = [s for s in suites if s not in registry.SUITES]
    if bad or not suites:
        raise ToolError(f"--suite: unknown suite(s) {', '.join(map(repr, bad)) or 'none given'};"
                        f" known: {', '.join(registry.SUITES)}")  # fmt: skip
    known: dict[str, tuple[str, Any, str]] = {}
    for suite in suites:
        if suite == "bundled":
            known.update({n: ("bundled", k, "") for n, k in registry.bundled().items()})
        else:
            known.update({f"salam/{n}": ("salam", k, "")
                          for n, k in registry.salam_suite().items()})
    if text is None:
        return known
    entries = [e.strip() for e in text.split(",") if e.strip()]
    out: dict[str, tuple[str, Any, str]] = {}
    unknown = []
    for e in entries:
        stem = Path(e).stem
        if _is_file(e) and not Path(e).is_file():
            raise ToolError(f"no such file: {e}")
        if e.endswith(".c") and stem in registry.bundled():
            out[stem] = ("bundled", registry.bundled()[stem], e)  # the C twin
        elif _is_file(e):
            k = registry.file_kernel(e, tuple(inputs), size=size, clang_args=tuple(clang_args))
            label = k.name if k.name not in out and k.name not in known else e
            out[label] = ("files", k, "")
        elif e in known:
            out[e] = known[e]
        elif f"salam/{e}" in known:
            out[f"salam/{e}"] = known[f"salam/{e}"]
        else:
            unknown.append(e)
    if unknown or not out:
        what = ", ".join(repr(n) for n in unknown) if unknown else "none given"
        raise ToolError(f"unknown kernel(s) {what}; valid kernels: {', '.join(known)} "
                        "(or a .c/.mlir file)")  # fmt: skip
    return out


def _sweep_list(text: str | None, machine: Any) -> list[int]:
    from tapeflow.bench import default_sweep
    from tapeflow.diagnostics import ToolError

    if text is not None and text.strip().lower() == "none":
        return []
    if text is None:
        caps = default_sweep(machine)
    else:
        caps = []
        for part in text.split(","):
            part = part.strip()
            try:
                kib = int(part)
            except ValueError:
                raise ToolError(f"--sweep: '{part}' is not a whole number of KiB") from None
            if kib <= 0 or kib & (kib - 1):
                raise ToolError(f"--sweep: {kib} KiB is not a positive power of two")
            caps.append(kib * 1024)
    caps.append(machine.l2.size)
    return sorted(set(caps))


def _machine_list(values: Sequence[str] | None) -> list[str]:
    """`--machine` values (repeated, or A,B; 'all' = the default run's machines)."""
    from tapeflow.bench import MACHINES

    names: list[str] = []
    for value in values or ["all"]:
        for part in value.split(","):
            part = part.strip()
            if part:
                names.extend(MACHINES if part == "all" else [part])
    return list(dict.fromkeys(names))


def _machine_desc(machine: Any, machine_file: str | None, sets: Sequence[str]) -> str:
    from tapeflow.bench import fmt_bytes
    from tapeflow.hwmodel.config import DEFAULT_MACHINE

    m = machine.raw
    parts = [
        f"`{m.get('meta', {}).get('name', '?')}` (hwmodel/defaults.toml"
        + (f" + {machine_file}" if machine_file and machine_file != DEFAULT_MACHINE else "")
        + "".join(f" + --set {s}" for s in sets) + ")",
        f"{m['core']['clock_ghz']} GHz {m['core']['issue_width']}-wide core",
        f"L1 {fmt_bytes(machine.l1.size)} {machine.l1.assoc}-way",
        f"L2 {fmt_bytes(machine.l2.size)} {machine.l2.assoc}-way",
        f"stride prefetcher {'on' if m['prefetch']['enabled'] else 'off'}",
        f"SPM {fmt_bytes(machine.spm_size)} ({machine.spm_access_energy_pj:.1f} pJ/64 b)",
        f"DRAM {m['dram']['bandwidth']} B/cycle, {m['dram']['latency']} cycles, "
        f"{m['dram']['energy_pj_per_byte']} pJ/B, shared by cache lines and DMA",
        f"memory terms overlap: {m['core']['overlap']}",
        f"DMA setup {m['dma']['setup']} cycles, {m['dma']['in_flight']} in flight",
    ]
    return "; ".join(parts)


KERNEL_CPU_S = {"mlp": 242, "lstm": 198, "conv2d": 141, "gemm": 80, "ragged_rnn": 54,
                "pwl": 47, "jacobi2d": 34, "softmax_ce": 20, "mass_spring": 18, "ba": 6,
                "pairwise": 2}  # fmt: skip
"""CPU seconds of each kernel's task in the default two-machine run (`--timings`, commit
16d97ce, 2026-12-03): only their ORDER is used, to start the longest tasks first so that
the workers finish together."""


def kernel_tasks(jobs: Sequence[Any], workers: int = 1) -> list[tuple[Any, ...]]:
    """The jobs grouped into tasks (`tapeflow.bench.run_jobs_shared`: one compile per
    pipeline, one run per distinct program for every machine), longest first: one task
    per kernel, or per (kernel, variant) when there are fewer than two kernels per worker
    (then the workers have enough tasks to share, and only the controls' identical
    variants run more than once). An unknown kernel (a C twin of another name) counts as
    a middle one; the Enzyme layout and TapeFlow (which carry the sweeps) before regions."""
    kernels = list(dict.fromkeys(job.kernel for job in jobs))
    per_variant = len(kernels) < 2 * workers
    tasks: dict[tuple[str, str], list[Any]] = {}
    for job in jobs:
        tasks.setdefault((job.kernel, job.variant if per_variant else ""), []).append(job)
    middle = sorted(KERNEL_CPU_S.values())[len(KERNEL_CPU_S) // 2]
    order = sorted(tasks, key=lambda k: (-KERNEL_CPU_S.get(k[0], middle), k[1] == "regions"))
    return [tuple(tasks[k]) for k in order]


def run_jobs(jobs: Sequence[Any], workers: int, progress: bool,
             timings: dict[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """Every job's result (the tasks of `kernel_tasks`, on a Dask LocalCluster when
    `workers` > 1).
    `timings` (when given) gets the cluster's start and stop times, each task's record
    and the workers' CPU seconds."""
    from tapeflow.bench import run_jobs_shared
    from tapeflow.sweep import Pool, progress_bar, run_unordered

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


def print_timings(phases: dict[str, float], timings: dict[str, Any], file: Any) -> None:
    """Where the wall and CPU time of a run went (`--timings`), on `file`."""
    import functools
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    driver = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    workers = sum((timings["worker_cpu_s"] or {}).values())
    tasks = timings["tasks"]
    in_tasks = sum(t["cpu_s"] for t in tasks)
    p = functools.partial(print, file=file)
    p("timings: wall seconds by phase")
    for name, secs in phases.items():
        p(f"  {name:<22} {secs:8.1f}")
    p(f"  {'total':<22} {sum(phases.values()):8.1f}")
    if timings["worker_cpu_s"] is None:
        p(f"timings: CPU seconds: {driver:.1f} (one process; in tasks {in_tasks:.1f})")
    else:
        p(f"timings: CPU seconds: driver (with the scheduler and nannies) {driver:.1f}, "
          f"workers {workers:.1f} (in tasks {in_tasks:.1f}, the rest: imports and Dask), "
          f"total {driver + workers:.1f}")  # fmt: skip
    p("timings: tasks in the order they finished (worker pid, wall, CPU, compile), and each "
      "simulation run in them (code generation, the run with its machines' models)")
    for t in tasks:
        p(f"  {','.join(t['kernels']):<12} pid {t['pid']:<7} wall {t['wall_s']:7.1f} "
          f"cpu {t['cpu_s']:7.1f} compile {t['compile_s']:5.1f}")  # fmt: skip
        for r in t["runs"]:
            p(f"    {' '.join(r['jobs']):<60} {r['machines']:3d} machines "
              f"codegen {r.get('codegen_s', 0.0):5.1f} run {r.get('run_s', 0.0):7.1f} "
              f"({r['path']})")  # fmt: skip
    per_worker: dict[int, float] = {}
    for t in tasks:
        per_worker[t["pid"]] = per_worker.get(t["pid"], 0.0) + t["wall_s"]
    p("timings: busy wall seconds per worker (load balance): "
      + ", ".join(f"pid {pid} {secs:.1f}" for pid, secs in per_worker.items()))


def plan(argv: Sequence[str]) -> tuple[argparse.Namespace, str, list[str], list[Any],
                                      list[Any]]:  # fmt: skip
    """`tapeflow-bench`'s arguments, checked: (args, size, kernel names, one (label,
    machine, sweep, spm_bytes) per machine, the jobs). Raises `ToolError` on bad input;
    `--help` and argparse's own errors exit as argparse does."""
    from tapeflow import bench
    from tapeflow.diagnostics import ToolError
    from tapeflow.hwmodel.config import load_machine
    from tapeflow.transforms.options import check_options

    args = _parser(list(bench.kernels())).parse_args(argv)
    size = args.size or ("small" if args.quick else "default")
    from tapeflow.frontends.c import c_arguments

    table = kernel_table(args.kernels, args.suite, args.inputs, size, c_arguments(args))
    for name in (n.strip() for n in args.exclude.split(",") if n.strip()):
        hit = [label for label in table if label in (name, f"salam/{name}")]
        if not hit:
            raise ToolError(f"--exclude: no kernel {name!r} in this run")
        for label in hit:
            del table[label]
    if not table:
        raise ToolError("--exclude leaves no kernel to run")
    args.kernel_table = table
    names = list(table)
    salam = any(suite == "salam" for suite, _, _ in table.values())
    if args.jobs is None:
        try:
            import distributed  # noqa: F401  (the sweep extra)

            args.jobs = os.cpu_count() or 1
        except ImportError:
            args.jobs = 1
    if args.jobs < 1:
        raise ToolError("--jobs must be >= 1")
    if args.tolerance < 0:
        raise ToolError("--tolerance must be >= 0")
    setups = []  # (label, machine, sweep, spm_bytes) per machine
    for label in _machine_list(args.machine):
        machine = load_machine(label, args.set)
        for assignment in args.set:  # the cost model is given them too
            bench.set_text(assignment)
        sweep = _sweep_list(args.sweep, machine)
        if salam and sweep:  # suite salam's comparison point is a sweep point
            sweep = sorted({*sweep, args.salam_cache * 1024})
        for cap in sweep:  # validate every sweep point before running anything
            bench.machine_from_raw(machine.raw, cap)
        spm_bytes = args.spm_bytes if args.spm_bytes is not None else machine.spm_size
        if spm_bytes > machine.spm_size:
            raise ToolError(f"--spm-bytes {spm_bytes} exceeds the spm.size "
                            f"{machine.spm_size} of machine {label}")  # fmt: skip
        try:
            check_options("tapeflow", spm_bytes=(spm_bytes, 1),  # type: ignore[arg-type]
                          depth=(args.depth, 1), tile_bytes=(args.tile_bytes, 0))
        except Exception as e:
            raise ToolError(str(e)) from None
        setups.append((label, machine, sweep, spm_bytes))
    swept = ("enzyme", "tapeflow") if args.sweep_tapeflow else ("enzyme",)
    jobs = [
        bench.Job(kernel=n, variant=v, size=size, machine=machine.raw, machine_label=label,
                  machine_sets=tuple(args.set),
                  spm_bytes=spm_bytes, tile_bytes=args.tile_bytes,
                  depth=args.depth, sweep=tuple(sweep) if v in swept else (),
                  seed=args.seed, backend=args.backend, c_source=table[n][2],
                  file_kernel=table[n][1] if table[n][0] != "bundled" else None)
        for label, machine, sweep, spm_bytes in setups
        for n in names
        for v in bench.VARIANTS
    ]
    return args, size, names, setups, jobs


def main(argv: Sequence[str] | None = None) -> int:
    t_start = time.perf_counter()
    argv = list(sys.argv[1:] if argv is None else argv)
    from tapeflow import bench
    from tapeflow.diagnostics import report_errors

    with report_errors():
        args, size, names, setups, jobs = plan(argv)
        out_dir = Path(args.out)
        out_dir.mkdir(parents=True, exist_ok=True)

    phases = {"setup": time.perf_counter() - t_start}
    timings: dict[str, Any] = {}
    t0 = time.perf_counter()
    with report_errors():  # e.g. --jobs 2 without Dask distributed: one error line
        results = run_jobs(jobs, args.jobs, not args.no_progress, timings)
    wall = time.perf_counter() - t0
    phases.update({"cluster start": timings["cluster_start_s"], "tasks": timings["tasks_s"],
                   "cluster stop": timings["cluster_stop_s"]})  # fmt: skip
    t_report = time.perf_counter()
    t_plots = 0.0

    command = "tapeflow-bench" + ("" if not argv else " " + shlex.join(argv))
    common = {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "wall_s": wall,
        "jobs": min(args.jobs, len(kernel_tasks(jobs, args.jobs))),
        "size": size,
        "machines": [label for label, *_ in setups],
        "tolerance": args.tolerance / 100.0,
        "cpu_s": sum(t["cpu_s"] for t in timings["tasks"]),
        "commit": _git_commit(),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
    }
    texts: list[str] = []
    per_machine: list[dict[str, Any]] = []
    summary: list[tuple[str, dict[str, Any]]] = []
    failed = []
    plots: list[str] = []
    several = len(setups) > 1
    table = args.kernel_table
    suites = list(dict.fromkeys(suite for suite, _, _ in table.values()))
    ratios = None
    for label, machine, sweep, spm_bytes in setups:
        by_kernel: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in names}
        for r in results:
            if r["machine"] == label:
                by_kernel[r["kernel"]][r["variant"]] = r
        for suite in suites:
            mine = [n for n in names if table[n][0] == suite]
            rows = [bench.summarize_kernel(n, size, by_kernel[n], machine,
                                           common["tolerance"], table[n][1])
                    for n in mine]  # fmt: skip
            gm = bench.geomeans(rows)
            name = machine.raw.get("meta", {}).get("name", "?")
            header = {
                **common,
                "suite": suite,
                "machine_name": name,
                "machine_desc": _machine_desc(machine, label, args.set),
                "tapeflow_spec": bench.pipeline_spec("tapeflow", spm_bytes, args.tile_bytes,
                                                     args.depth, machine=label, sets=args.set),
                "sweep": sweep,
            }
            texts.append(bench.markdown(rows, gm, machine, size=size, header=header))
            data = bench.to_json(rows, gm, header, machine)
            if suite == "salam":
                if ratios is None:
                    from tapeflow.kernels import salam_ratios

                    ratios = salam_ratios()
                compare = bench.salam_comparison(rows, {n: table[n][1] for n in mine},
                                                 ratios, args.salam_cache * 1024)
                texts.append(bench.salam_markdown(compare, name, args.salam_cache * 1024))
                data["salam_comparison"] = compare
            data["runs"] = [
                {k: r.get(k) for k in ("kernel", "variant", "spec", "path", "wall_s", "cpu_s",
                                       "compile_s", "shared_with", "error")}
                for r in sorted(results, key=lambda r: (names.index(r["kernel"]), r["variant"]))
                if r["machine"] == label and r["kernel"] in mine
            ]
            per_machine.append(data)
            key = name if suite == "bundled" else f"{name} ({suite})"
            summary.append((key, gm))
            if not args.no_plots:
                t = time.perf_counter()
                tag = (f"-{label}" if several else "") + ("" if suite == "bundled"
                                                          else f"-{suite}")  # fmt: skip
                try:
                    plots += bench.write_plots(rows, gm, out_dir, tag)
                except ImportError as e:
                    print(f"warning: no plots ({e}); pip install -e '.[bench]'",
                          file=sys.stderr)  # fmt: skip
                t_plots += time.perf_counter() - t
            failed += [(label, r, by_kernel) for r in rows if not r.grads_ok]
    several = several or len(suites) > 1
    if several:
        texts.append(bench.summary_markdown(summary))
    text = "\n".join(texts)
    blob = json.dumps({"header": common, "machines": per_machine,
                       "summary": {name: gm for name, gm in summary}},
                      indent=1, default=_json_default)  # fmt: skip
    (out_dir / "results.md").write_text(text)
    (out_dir / "results.json").write_text(blob + "\n")
    written = [str(out_dir / "results.md"), str(out_dir / "results.json"), *plots]
    print(f"wrote {', '.join(written)}", file=sys.stderr)
    if args.timings:
        phases["plots"] = t_plots
        phases["report and files"] = time.perf_counter() - t_report - t_plots
        print_timings(phases, timings, sys.stderr)
    if args.json == "-":
        sys.stderr.write(text)
        sys.stdout.write(blob + "\n")
    else:
        sys.stdout.write(text)
        if args.json:
            Path(args.json).write_text(blob + "\n")
    for label, r, by_kernel in failed:
        where = f"{label}: {r.kernel}" if several else r.kernel
        for e in r.errors:
            tb = next((x.get("traceback") for x in by_kernel[r.kernel].values()
                       if x.get("error") and e.endswith(x["error"])), None)  # fmt: skip
            print(f"error: {where}: {e}", file=sys.stderr)
            if tb and os.environ.get("TAPEFLOW_BENCH_TRACEBACK"):
                print(tb, file=sys.stderr)
        if not r.errors:
            print(f"error: {where}: gradients differ across variants: "
                  + "; ".join(r.grad_notes), file=sys.stderr)  # fmt: skip
    if failed:
        print(f"error: {len(failed)} kernel(s) failed the check: "
              f"{', '.join(f'{m}/{r.kernel}' if several else r.kernel for m, r, _ in failed)}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _git_commit() -> str | None:
    """`git describe --always --dirty` of the source tree, when it is a git checkout."""
    import subprocess

    from tapeflow.bundled_kernels import REPO_ROOT

    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _json_default(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, tuple):
        return list(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


if __name__ == "__main__":
    sys.exit(main())
