"""`tapeflow-sweep`: a grid of kernels x machines x pass options, on Dask distributed.

    tapeflow-sweep spec.toml                          # LocalCluster, nproc workers
    tapeflow-sweep spec.toml --scheduler tcp://host:8786
    tapeflow-sweep --plot plots --out sweep-out      # re-plot from the Parquet file

The logic lives in `tapeflow.eval.sweep`; this is the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tapeflow.diagnostics import ToolError, report_errors
from tapeflow.eval.plots import write_sweep_plots
from tapeflow.eval.pool import Pool
from tapeflow.eval.sweep.engine import interrupted_message, run_sweep
from tapeflow.eval.sweep.results import RESULTS, read_results, summary
from tapeflow.eval.sweep.spec import SPEC_DOC, load_spec

_DESCRIPTION = """\
Compiles and simulates every point of a grid (kernels, sizes, machine presets or files,
machine keys, TapeFlow pass options; see the spec below) each way tapeflow-bench compiles
one point (and TapeFlow with checkpointing too with a snapshots axis), on Dask
distributed: a LocalCluster of --workers processes by default,
or the scheduler at --scheduler. The IR of each (kernel, pipeline) is compiled once and
reused for every machine; simulations are cached by a hash of (code, IR, machine, inputs)
under OUT/cache/, so a rerun with one more machine value only simulates the new points.
"""

_EPILOG = """\
output (OUT = --out, default sweep-out/):
  OUT/results.parquet   one row per (point, variant): the point's axes, `variant`,
                        `pipeline`, `error`, every report field as `report.<key>`,
                        `sram_bytes` (the whole chip's on-chip SRAM: L1 + L2 + the
                        scratchpad's capacity when the variant uses it; its high-water mark
                        is `report.sram.spm_high_water_bytes`), and against the Enzyme
                        layout of the same point: `speedup`, `energy_ratio_on_chip`,
                        `energy_ratio_total`, `grads_identical` (bit-identical gradients);
                        on TapeFlow rows `speedup_iso_sram`: the Enzyme layout at the
                        smallest sram_bytes >= TapeFlow's among the points that differ only
                        in l2.size and pass options (sweep l2.size to get it);
                        `dram_footprint_bytes`: report.tape_bytes + report.snapshot_bytes
                        (checkpoint snapshots); on checkpoint rows, against TapeFlow at the
                        same point: `cycles_vs_tapeflow`, `footprint_reduction`
  OUT/parts/            rows of finished points, written as they finish; an interrupted
                        sweep resumes from them (points already done, identified by their
                        axis values, are skipped; points with an error are run again);
                        merged into results.parquet at the end
  --plot DIR            heatmap_speedup, heatmap_energy_ratio_on_chip, cycles_vs_sram,
                        pareto and, with a snapshots axis, cycles_vs_footprint (.png +
                        .csv); without SPEC, re-plots OUT/results.parquet
  stdout                a summary; stderr: a progress bar (tqdm), one step per point
                        (written when all its variants are done)

exit status: 0 when every row ran without error; 1 otherwise, or for a bad spec
(`error: spec.toml:line:col: ...`, nothing run).
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tapeflow-sweep", description=_DESCRIPTION, epilog=_EPILOG + "\n" + SPEC_DOC,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p.add_argument("spec", nargs="?", metavar="SPEC.toml", help="the sweep spec")
    p.add_argument("--out", default="sweep-out", metavar="DIR",
                   help="results, caches and parts (default: sweep-out)")
    p.add_argument("--plot", metavar="DIR", default=None, help="write the plots to DIR")
    p.add_argument("--heatmap", metavar="X,Y", default=None,
                   help="heatmap axes (default: the spec's plot.heatmap, else the two axes "
                   "with the most values)")  # fmt: skip
    p.add_argument("--workers", "-j", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="LocalCluster worker processes (default: nproc = %(default)s; "
                   "1 runs in this process)")  # fmt: skip
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="an existing Dask scheduler, e.g. tcp://host:8786 (its workers need "
                   "this TapeFlow installed)")  # fmt: skip
    p.add_argument("--memory-limit", metavar="SIZE", default=None,
                   help="memory per LocalCluster worker, e.g. 2GiB (default: Dask's auto)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--summary-json", metavar="FILE", default=None,
                   help="also write the run's summary (counts, time, per kernel TapeFlow's "
                   "speedup range and the Pareto front) to FILE")  # fmt: skip
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    with report_errors():
        if args.spec is None and args.plot is None:
            raise ToolError("give a SPEC.toml to run, or --plot DIR to re-plot --out's results")
        if args.workers < 1:
            raise ToolError("--workers must be >= 1")
        heatmap = [a.strip() for a in args.heatmap.split(",")] if args.heatmap else []
        if args.heatmap and len(heatmap) != 2:
            raise ToolError("--heatmap expects two axes, X,Y")
        out = Path(args.out)
        spec = load_spec(args.spec) if args.spec else None
        if spec is None:
            table = read_results(out)
            if table is None:
                raise ToolError(f"no results in '{out}' (no {RESULTS} nor parts)")
        else:
            out.mkdir(parents=True, exist_ok=True)
            try:
                with Pool(args.workers, args.scheduler, args.memory_limit) as pool:
                    stats = run_sweep(spec, out, pool, progress=not args.no_progress)
            except KeyboardInterrupt:
                print(interrupted_message(out, spec), file=sys.stderr)
                return 130
            table = read_results(out)
            where = args.scheduler or (f"LocalCluster, {args.workers} workers"
                                       if args.workers > 1 else "in process")  # fmt: skip
            print(f"tapeflow-sweep {args.spec}: {stats.points} points "
                  f"({stats.points_skipped} already in {out / RESULTS}), "
                  f"{stats.rows} rows written ({stats.errors} with an error) in "
                  f"{stats.wall_s:.1f} s ({where})")  # fmt: skip
            print(f"  compiled {stats.compiles_run} IR ({stats.compiles_cached} cached), "
                  f"simulated {stats.simulations_run} (IR, machine) pairs "
                  f"({stats.simulations_cached} cached) in {stats.tasks} tasks")  # fmt: skip
        if args.summary_json and spec is not None:
            Path(args.summary_json).write_text(json.dumps(
                summary(table, stats, args.scheduler or args.workers), indent=1) + "\n")
        if args.plot:
            paths = write_sweep_plots(table, args.plot,
                                      heatmap or (spec.heatmap if spec else []),
                                      spec.axes if spec else [])  # fmt: skip
            pngs = [p.name for p in paths if p.suffix == ".png"]
            note = "" if any(n.startswith("heatmap") for n in pngs) else \
                " (no heatmaps: fewer than two axes vary; see --heatmap)"  # fmt: skip
            print(f"  plots: {', '.join(pngs)} in {args.plot}{note}")
        errors = [e for e in table.column("error").to_pylist() if e] if table else []
        if spec is not None and stats.errors:
            for e in sorted(set(errors)):
                print(f"error: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
