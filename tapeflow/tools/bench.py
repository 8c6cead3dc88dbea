"""`tapeflow-bench`: every benchmark kernel compiled each way and simulated on one machine.

    tapeflow-bench                          # default sizes, all kernels, both machines
    tapeflow-bench --quick                  # small sizes (seconds)
    tapeflow-bench --machine accel-salam    # one machine (a preset name or a TOML file)
    tapeflow-bench --kernels gemm,lstm --json results.json --out bench-out
    tapeflow-bench --set dram.energy_pj_per_byte=64 --spm-bytes 16384
    tapeflow-bench --kernels rd.c --inputs u.npz --args 16 100 0.01 0.1   # your kernel

The logic lives in `tapeflow.eval`; this is the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tapeflow.diagnostics import ToolError, report_errors
from tapeflow.eval import jobs, kernels, markdown, run, summary
from tapeflow.eval.bundled import SOURCE_TREE
from tapeflow.eval.report import bench_report, verdict
from tapeflow.eval.summary import METRICS_DOC
from tapeflow.frontends.c import add_c_arguments, c_arguments
from tapeflow.hwmodel.config import load_machine
from tapeflow.tools.common import take_scalars
from tapeflow.transforms.options import DEFAULT_DEPTH, check_options, scratchpad_bytes

_DESCRIPTION = """\
Compiles every kernel of the suites (--suite: bundled, the eleven kernels of
benchmarks/kernels, by default; salam, gem5-SALAM's AD benchmarks in C) or of your own
kernel files (--kernels k.c,k.mlir), default sizes, each of these ways from the
same reverse-mode AD output (tapeflow-autodiff, min-tape policy), for each machine
(default: the presets default-45nm, a CPU, and accel-salam, a gem5-SALAM-like
accelerator cluster; one table per machine, then a summary of the geomeans and of the
worst TapeFlow speedup):
  Enzyme layout  tapeflow-autodiff,tapeflow-lower-tape   (one DRAM array per cached value)
  regions only   tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions
  TapeFlow       tapeflow{spm-bytes=S tile-bytes=T depth=D}
  ideal tape     tapeflow-autodiff,tapeflow-lower-tape{ideal_tape=true}   (the Enzyme
                 layout's program, every tape access counted but free: gem5-SALAM's "ad")
and real Enzyme-MLIR's gradient (enzyme-autodiff; needs the optional extra `enzyme`,
without which the variant is skipped with a line naming it; --no-enzyme-mlir: off); runs each
gradient on the hardware model (compiled fast path) with the same machine and the
kernel's own inputs, checks that the variants give bit-identical gradients (every memref
argument after the run), and reports per kernel and as geometric means: speedup over the
Enzyme layout (cycles), the share of the ideal tape's saving that TapeFlow captures,
DRAM accesses as gem5-SALAM counts them, on-chip / on-chip-memory / total energy ratios
with a breakdown
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
             per finished run of a task (kernel: variant) and one per finished task;
             Ctrl-C stops it (exit status 130) and writes nothing

the cache sweep: the Enzyme layout's and TapeFlow's gradients run once for every machine
and every L2 capacity in --sweep (hwmodel.fastsim.simulate_fast_many: one hardware model
per machine and capacity hears the same run, so a point costs one cache simulation, not
one execution). L1 stays at the machine's size; the default sweep is L2 = max(4 KiB, L1)
doubling up to 4 MiB. Each machine is loaded once, by the driver, and every run gets that
same description.

tasks: one per kernel, longest first (tapeflow.eval.run.run_jobs_shared): each pipeline is
compiled once, and each distinct program (the controls' variants but TapeFlow are one)
runs once for all the machines; one per (kernel, variant) when there are fewer than two
kernels per worker. --timings prints where the wall and CPU time went.

the report checks that the default sizes make the Enzyme-layout tape at least 4x the
machine's L2 (last-level cache) on every kernel that caches, and says so per kernel.

time: the default run (two machines) takes several minutes on an idle 2-core machine
(see docs/RESULTS.md for the measured time); --quick a few seconds per machine.

exit status: 0 when every variant ran, every kernel's gradients are bit-identical
across the variants and Enzyme-MLIR's (when it ran) agree with them within a
relative error of 1e-12 (a kernel it refuses is listed, not an error); 1 otherwise
(the table marks the kernel, the reason is printed) or on a usage error (unknown kernel, bad machine key: `error: ...`).
"""


def _parser(kernel_names: Sequence[str]) -> argparse.ArgumentParser:
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
                   "gem5-SALAM's own speedups beside ours), shapes (a triangular solve, a "
                   "down-counting back substitution, a while loop, a branchy dynamic "
                   "program: benchmarks/kernels/shapes/), several: bundled,salam, or all: "
                   "every suite that has kernels but shapes (scripts/bench's default)")
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
                   "(default: tapeflow-run's seeded fill rule); repeatable. Scalars too, by "
                   "name: numpy.savez('in.npz', u=u, n=16, dt=0.01) gives %%n and %%dt")
    p.add_argument("--args", nargs="*", default=[], metavar="VALUE",
                   help="a kernel file's scalar arguments not in --inputs, in order, as "
                   "tapeflow-run --args (they run up to the next option, so -1e-3 is a value)")
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
    p.add_argument("--depth", type=int, default=DEFAULT_DEPTH, metavar="D",
                   help="TapeFlow's tile buffers / prefetch depth (2: double buffering)")
    p.add_argument("--sweep", metavar="KIB,...", default=None,
                   help="L2 capacities in KiB for the cache sweeps (default: max(4 KiB, L1) "
                   "doubling up to 4096; powers of two; 'none' disables it); each machine's "
                   "own L2 is always included")  # fmt: skip
    p.add_argument("--enzyme-mlir", action=argparse.BooleanOptionalAction, default=True,
                   help="a fifth variant: real Enzyme-MLIR's gradient (enzyme-autodiff), on "
                   "the compiled fast path; on by default where the optional extra `enzyme` "
                   "is installed (without it the bench says once that the column needs it); "
                   "its gradient is checked against ours "
                   "(normwise relative error max |a - b| / max |b| <= 1e-12 per array, the "
                   "largest per-entry error shown beside it; a disagreement is a warning "
                   "and a row of its table, not a failure of our variants' check); a "
                   "kernel Enzyme refuses is listed with its message")
    p.add_argument("--sweep-tapeflow", action=argparse.BooleanOptionalAction, default=True,
                   help="also sweep TapeFlow's L2 (same run, one more cache simulation per "
                   "point; on by default): the SRAM each design needs for the same cycles, "
                   "and L1 + L2 needed (+ the scratchpad for TapeFlow)")  # fmt: skip
    p.add_argument("--spm-sweep", action=argparse.BooleanOptionalAction, default=False,
                   help="also run TapeFlow with each scratchpad of 512 B to 32 KiB (powers of "
                   "two; its budget and the machine's spm.size; one compile and one run per "
                   "distinct program): 'scratchpad needed' = the smallest within 2%% of "
                   "TapeFlow's best cycles, where the SRAM needed and the energy ratios take "
                   "TapeFlow (scripts/bench turns it on; off: the machine's spm.size). Costs "
                   "little at --quick sizes; at the default sizes each distinct program is a "
                   "run of its own, and small tiles are many DMA transfers to simulate")  # fmt: skip
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


def _sweep_list(text: str | None, machine: Any) -> list[int]:
    if text is not None and text.strip().lower() == "none":
        return []
    if text is None:
        caps = summary.default_sweep(machine)
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
    names: list[str] = []
    for value in values or ["all"]:
        for part in value.split(","):
            part = part.strip()
            if part:
                names.extend(jobs.MACHINES if part == "all" else [part])
    return list(dict.fromkeys(names))


def plan(argv: Sequence[str]) -> tuple[argparse.Namespace, str, list[str], list[Any],
                                      list[Any]]:  # fmt: skip
    """`tapeflow-bench`'s arguments, checked: (args, size, kernel names, one (label,
    machine, sweep, spm_bytes) per machine, the jobs). Raises `ToolError` on bad input;
    `--help` and argparse's own errors exit as argparse does."""
    rest, scalars = take_scalars(argv)
    args = _parser(list(jobs.kernels())).parse_args(rest)
    size = args.size or ("small" if args.quick else "default")
    table = kernels.kernel_table(args.kernels, args.suite, args.inputs, size, c_arguments(args),
                                 scalars)  # fmt: skip
    if scalars and not any(s == "files" for s, _, _ in table.values()):
        raise ToolError("--args: only kernel files take scalars (--kernels k.c)")
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
        sweep = _sweep_list(args.sweep, machine)
        if salam and sweep:  # suite salam's comparison point is a sweep point
            sweep = sorted({*sweep, args.salam_cache * 1024})
        for cap in sweep:  # validate every sweep point before running anything
            jobs.machine_from_raw(machine.raw, cap)
        try:
            spm_bytes = scratchpad_bytes(args.spm_bytes, machine.spm_size, label)
            check_options("tapeflow", spm_bytes=(spm_bytes, 1),  # type: ignore[arg-type]
                          depth=(args.depth, 1), tile_bytes=(args.tile_bytes, 0))
        except Exception as e:
            raise ToolError(str(e)) from None
        setups.append((label, machine, sweep, spm_bytes))
    swept = ("enzyme", "tapeflow") if args.sweep_tapeflow else ("enzyme",)
    baselines, args.skipped = jobs.baselines() if args.enzyme_mlir else ((), [])
    planned = [
        jobs.Job(kernel=n, variant=v, size=size, machine=machine.raw, machine_label=label,
                  machine_sets=tuple(args.set),
                  spm_bytes=spm_bytes, tile_bytes=args.tile_bytes,
                  depth=args.depth, sweep=tuple(sweep) if v in swept else (),
                  spm_sweep=jobs.SPM_SWEEP if args.spm_sweep and v == "tapeflow" else (),
                  seed=args.seed, backend=args.backend, c_source=table[n][2],
                  file_kernel=table[n][1] if table[n][0] != "bundled" else None,
                  progress_lines=not args.no_progress and not sys.stderr.isatty())
        for label, machine, sweep, spm_bytes in setups
        for n in names
        for v in (*jobs.VARIANTS, *baselines)
    ]
    return args, size, names, setups, planned


def main(argv: Sequence[str] | None = None) -> int:
    t_start = time.perf_counter()
    argv = list(sys.argv[1:] if argv is None else argv)
    with report_errors():
        args, size, _names, setups, planned = plan(argv)
        out_dir = Path(args.out)
        out_dir.mkdir(parents=True, exist_ok=True)
    for line in args.skipped:
        print(f"tapeflow-bench: {line}", file=sys.stderr)

    phases = {"setup": time.perf_counter() - t_start}
    timings: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        with report_errors():  # e.g. --jobs 2 without Dask distributed: one error line
            results = run.run_jobs(planned, args.jobs, not args.no_progress, timings)
    except KeyboardInterrupt:
        print(f"tapeflow-bench: interrupted after {time.perf_counter() - t0:.0f} s; the "
              f"report needs every task, so nothing was written to {out_dir}/",
              file=sys.stderr)  # fmt: skip
        return 130
    wall = time.perf_counter() - t0
    phases.update({"cluster start": timings["cluster_start_s"], "tasks": timings["tasks_s"],
                   "cluster stop": timings["cluster_stop_s"]})  # fmt: skip
    t_report = time.perf_counter()

    command = "tapeflow-bench" + ("" if not argv else " " + shlex.join(argv))
    common = {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "wall_s": wall,
        "jobs": min(args.jobs, len(run.kernel_tasks(planned, args.jobs))),
        "size": size,
        "machines": [label for label, *_ in setups],
        "tolerance": args.tolerance / 100.0,
        "spm_sweep": list(jobs.SPM_SWEEP) if args.spm_sweep else [],
        "spm_tolerance": jobs.SPM_TOLERANCE,
        "cpu_s": sum(t["cpu_s"] for t in timings["tasks"]),
        "commit": _git_commit(),
        "cpu_count": os.cpu_count(),
        "load_average": os.getloadavg(),
        "skipped": args.skipped,
    }
    report = bench_report(results, setups, args.kernel_table, size, common, sets=args.set,
                          tile_bytes=args.tile_bytes, depth=args.depth,
                          salam_cache=args.salam_cache * 1024,
                          plot_dir=None if args.no_plots else out_dir)  # fmt: skip
    text, several = "\n".join(report.texts), report.several
    if args.quick:  # the first table a user sees: what to make of it
        text += "\n" + "\n".join(verdict(report, size)) + "\n"
    blob = json.dumps({"header": common, "machines": report.machines,
                       "summary": {name: gm for name, gm in report.summaries}},
                      indent=1, default=_json_default)  # fmt: skip
    (out_dir / "results.md").write_text(text)
    (out_dir / "results.json").write_text(blob + "\n")
    written = [str(out_dir / "results.md"), str(out_dir / "results.json"), *report.plots]
    print(f"wrote {', '.join(written)}", file=sys.stderr)
    if args.timings:
        phases["plots"] = report.plots_s
        phases["report and files"] = time.perf_counter() - t_report - report.plots_s
        markdown.print_timings(phases, timings, sys.stderr)
    if args.json == "-":
        sys.stderr.write(text)
        sys.stdout.write(blob + "\n")
    else:
        sys.stdout.write(text)
        if args.json:
            Path(args.json).write_text(blob + "\n")
    for label, _suite, rows in report.rows:
        for r in rows:
            for b in r.baselines.values():
                if "note" in b:
                    where = f"{label}: {r.kernel}" if several else r.kernel
                    print(f"warning: {where}: {b['note']}", file=sys.stderr)
    failed = report.failed
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
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=SOURCE_TREE,
                             capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _json_default(x: Any) -> Any:
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
