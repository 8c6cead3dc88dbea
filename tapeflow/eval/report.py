"""The report of one `tapeflow-bench` run (`bench_report`): per machine and suite, the
jobs' results as rows and geomeans, in Markdown, JSON and plots, with suite salam beside
gem5-SALAM's own speedups."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tapeflow.eval.jobs import pipeline_spec
from tapeflow.eval.markdown import machine_desc, markdown, salam_markdown, summary_markdown
from tapeflow.eval.plots import write_bench_plots
from tapeflow.eval.suites import salam_ratios
from tapeflow.eval.summary import geomeans, salam_comparison, summarize_kernel, to_json


@dataclass
class BenchReport:
    """What `bench_report` made: the Markdown `texts`, one JSON object per machine and
    suite (`machines`), their geomeans by name (`summaries`), the kernels that failed the
    gradient check (machine, row, results by kernel), the plots written and their time."""

    texts: list[str] = field(default_factory=list)
    machines: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    failed: list[tuple[str, Any, dict[str, Any]]] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    plots_s: float = 0.0
    several: bool = False
    """More than one table (machines or suites): a summary table ends the Markdown."""
    rows: list[tuple[str, str, list[Any]]] = field(default_factory=list)
    """(machine label, suite, its `KernelRow`s) per table."""


def bench_report(results: Sequence[dict[str, Any]],
                 setups: Sequence[tuple[str, Any, list[int], int]],
                 table: dict[str, tuple[str, Any, str]], size: str, common: dict[str, Any], *,
                 sets: Sequence[str], tile_bytes: int, depth: int, salam_cache: int,
                 plot_dir: Any = None) -> BenchReport:  # fmt: skip
    """The report of the jobs' `results`: per machine of `setups` (label, machine, sweep,
    scratchpad bytes) and suite of `table` (`kernels.kernel_table`), with the run's
    `common` header; suite salam compared at `salam_cache` bytes; plots in `plot_dir`
    (none when None)."""
    out = BenchReport()
    several = len(setups) > 1
    names = list(table)
    suite_names = list(dict.fromkeys(suite for suite, _, _ in table.values()))
    ratios = None
    for label, machine, sweep, spm_bytes in setups:
        by_kernel: dict[str, dict[str, dict[str, Any]]] = {n: {} for n in names}
        for r in results:
            if r["machine"] == label:
                by_kernel[r["kernel"]][r["variant"]] = r
        for suite in suite_names:
            mine = [n for n in names if table[n][0] == suite]
            rows = [summarize_kernel(n, size, by_kernel[n], machine,
                                     common["tolerance"], table[n][1])
                    for n in mine]  # fmt: skip
            gm = geomeans(rows)
            name = machine.raw.get("meta", {}).get("name", "?")
            header = {
                **common,
                "suite": suite,
                "machine_name": name,
                "machine_desc": machine_desc(machine, label, sets),
                "tapeflow_spec": pipeline_spec("tapeflow", spm_bytes, tile_bytes, depth,
                                               machine=label, sets=sets),
                "sweep": sweep,
            }
            out.texts.append(markdown(rows, gm, machine, size=size, header=header))
            out.rows.append((label, suite, rows))
            data = to_json(rows, gm, header, machine)
            if suite == "salam":
                if ratios is None:
                    ratios = salam_ratios()
                compare = salam_comparison(rows, {n: table[n][1] for n in mine}, ratios,
                                           salam_cache, machine.l2.size)
                out.texts.append(salam_markdown(compare, name, salam_cache))
                data["salam_comparison"] = compare
            data["runs"] = [
                {k: r.get(k) for k in ("kernel", "variant", "spec", "path", "wall_s", "cpu_s",
                                       "compile_s", "shared_with", "error")}
                for r in sorted(results, key=lambda r: (names.index(r["kernel"]), r["variant"]))
                if r["machine"] == label and r["kernel"] in mine
            ]
            out.machines.append(data)
            key = name if suite == "bundled" else f"{name} ({suite})"
            out.summaries.append((key, gm))
            if plot_dir is not None:
                t = time.perf_counter()
                tag = (f"-{label}" if several else "") + ("" if suite == "bundled"
                                                          else f"-{suite}")  # fmt: skip
                try:
                    out.plots += write_bench_plots(rows, gm, plot_dir, tag)
                except ImportError as e:
                    print(f"warning: no plots ({e}); pip install -e '.[bench]'",
                          file=sys.stderr)  # fmt: skip
                out.plots_s += time.perf_counter() - t
            out.failed += [(label, r, by_kernel) for r in rows if not r.grads_ok]
    out.several = several or len(suite_names) > 1
    if out.several:
        out.texts.append(summary_markdown(out.summaries))
    return out


PAPER_CLAIMS = "1.3-2.5x faster, 5-40x less on-chip SRAM, 8x less on-chip energy"
"""The paper's (CGO 2024) headline claims, as README "Results beside the paper" lists them."""


def verdict(report: BenchReport, size: str) -> list[str]:
    """Three lines a user can act on after `tapeflow-bench --quick`: where TapeFlow paid
    (speedup >= 1.01x), where the cost model kept Enzyme's layout (the same cycles) and
    how to see why, and what the full run is for."""
    paid, kept = [], []
    for label, suite, rows in report.rows:
        tag = label if suite == "bundled" else f"{label} ({suite})"
        good = [r for r in rows if not r.errors and (r.speedup.get("tapeflow") or 0) >= 1.01]
        good.sort(key=lambda r: -(r.speedup.get("tapeflow") or 0))
        paid.append(f"{tag}: " + (", ".join(f"{r.kernel} {r.speedup['tapeflow']:.2f}x"
                                             for r in good) or "nowhere"))  # fmt: skip
        same = [r.kernel for r in rows if not r.errors and not r.control
                and r.variants.get("tapeflow", {}).get("cycles")
                == r.variants.get("enzyme", {}).get("cycles")]  # fmt: skip
        kept.append(f"{tag}: {', '.join(same) or 'none'}")
    example = next((label for label, _, _ in report.rows), "default-45nm")
    return [
        f"verdict: TapeFlow paid on {'; '.join(paid)}.",
        f"verdict: the cost model kept Enzyme's layout (same cycles) on {'; '.join(kept)}; "
        f"`tapeflow-opt K.mlir -p 'tapeflow{{machine={example}}}' --remarks` says why, per "
        "tape cache.",
        f"verdict: at {size} sizes the tapes fit in the caches; the full run "
        "(`tapeflow-bench`, default sizes, every tape >= 4x the L2) is what README "
        f"\"Results beside the paper\" sets beside the paper's claims ({PAPER_CLAIMS}).",
    ]
