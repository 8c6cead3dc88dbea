"""The plots of `tapeflow-bench` (`write_bench_plots`) and `tapeflow-sweep`
(`write_sweep_plots`), with matplotlib's file-only backend."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tapeflow.diagnostics import ToolError
from tapeflow.eval.jobs import ENERGY_COMPONENTS, KIB, LABELS, VARIANTS
from tapeflow.eval.markdown import fmt_x
from tapeflow.eval.summary import KernelRow, geomean
from tapeflow.eval.sweep.results import grid_axes, pareto_front
from tapeflow.eval.sweep.spec import CHECKPOINT_OPTIONS


def _pyplot() -> Any:
    """matplotlib's pyplot on its file-only backend (the optional extra `bench`: imported
    when a plot is drawn, not with the harness)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def write_bench_plots(rows: Sequence[KernelRow], gm: dict[str, Any], out_dir: Any,
                suffix: str = "") -> list[str]:  # fmt: skip
    """speedup.png, energy.png, sram.png in `out_dir` (`suffix` before `.png`, e.g. the
    machine's name); returns the paths. Legends sit outside the axes, so they never
    cover a bar."""
    plt = _pyplot()

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
    letters = {v: LABELS[v][0].upper() for v in VARIANTS}  # E, R, T, I
    w = 0.8 / len(VARIANTS)
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
                ax.bar(xs + (j - (len(VARIANTS) - 1) / 2) * w, vals, w * 0.95, bottom=bottom,
                       color=colors[comp],
                       label=comp if j == 0 else None)  # fmt: skip
                bottom += np.array(vals)
            for xi, b in zip(xs, bottom, strict=True):
                ax.text(xi + (j - (len(VARIANTS) - 1) / 2) * w, b, letters[v], ha="center",
                        va="bottom", fontsize=7)
            top = max(top, float(bottom.max(initial=0.0)))
        ax.set_ylim(0, top * 1.15 or 1.0)  # room for the E/R/T labels under the title
        ax.set_xticks(xs, names, rotation=30, ha="right")
        ax.set_ylabel(ylabel)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    axes[0].set_title("Energy by component ("
                      + ", ".join(f"{letters[v]} = {LABELS[v]}" for v in VARIANTS) + ")"
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


# ------------------------------------------------------------------------------------------
# tapeflow-sweep

CHECKPOINT_LABEL = "TapeFlow with checkpointing"
"""The variant `checkpoint`'s name in plots (beside `tapeflow.eval.jobs.LABELS`)."""


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["empty"])
        writer.writeheader()
        writer.writerows(rows)


def heatmap_axes(rows: Sequence[dict[str, Any]], axes: Sequence[str]) -> list[str]:
    """The two axes with the most distinct values (ties: spec order), kernel excluded, and
    the checkpoint options too (TapeFlow's rows do not depend on them)."""
    counts = {a: len({json.dumps(r.get(a)) for r in rows}) for a in axes
              if a != "kernel" and a not in CHECKPOINT_OPTIONS}  # fmt: skip
    varying = sorted((a for a in counts if counts[a] > 1), key=lambda a: -counts[a])
    return varying[:2]


def write_sweep_plots(table: Any, plot_dir: str | Path, heatmap: Sequence[str] = (),
                axes: Sequence[str] = ()) -> list[Path]:  # fmt: skip
    """Heatmaps of TapeFlow's speedup and on-chip energy ratio over two axes (geomean over
    the others), cycles vs on-chip SRAM of both designs, the Pareto front of
    (cycles, SRAM) per kernel, and cycles vs DRAM footprint (tape + snapshots) of the
    Enzyme layout, TapeFlow and TapeFlow with checkpointing: a PNG and a CSV each. Returns
    the paths."""
    plt = _pyplot()
    from matplotlib.colors import TwoSlopeNorm

    plot_dir = Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    rows = [r for r in table.to_pylist() if not r.get("error")]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    if not axes:
        axes = grid_axes(table.column_names)
    axes = list(axes)
    paths: list[Path] = []

    def save(fig: Any, name: str, data: list[dict[str, Any]]) -> None:
        fig.tight_layout()
        fig.savefig(plot_dir / f"{name}.png", dpi=100, bbox_inches="tight")  # the legends
        plt.close(fig)
        _write_csv(plot_dir / f"{name}.csv", data)
        paths.extend([plot_dir / f"{name}.png", plot_dir / f"{name}.csv"])

    missing = [a for a in heatmap if a not in table.column_names]
    if missing:
        raise ToolError(f"heatmap axis {', '.join(map(repr, missing))} is not a column of "
                        f"the results (axes: {', '.join(axes)})")  # fmt: skip
    tf = [r for r in rows if r["variant"] == "tapeflow" and r.get("speedup") is not None]
    pair = list(heatmap) or heatmap_axes(tf, axes)
    if tf and len(pair) == 2:
        x_axis, y_axis = pair
        for metric, title in (("speedup", "TapeFlow speedup over the Enzyme layout"),
                              ("energy_ratio_on_chip",
                               "on-chip energy, Enzyme layout / TapeFlow")):  # fmt: skip
            xs = sorted({r[x_axis] for r in tf}, key=_sort_key)
            ys = sorted({r[y_axis] for r in tf}, key=_sort_key)
            panels = [k for k in kernels if any(r["kernel"] == k for r in tf)]
            fig, axs = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 0.8, 3.6),
                                    squeeze=False)  # fmt: skip
            data = []
            for ax, kernel in zip(axs[0], panels, strict=True):
                grid = [[geomean(r[metric] for r in tf if r["kernel"] == kernel
                                  and r[x_axis] == x and r[y_axis] == y) for x in xs]
                        for y in ys]  # fmt: skip
                values = [[math.nan if v is None else v for v in row] for row in grid]
                finite = [v for row in values for v in row if not math.isnan(v)]
                # red below 1 (TapeFlow worse), green above, always centred on 1.0 with a
                # scale symmetric in ratio (0.8 is as red as 1.25 is green)
                spread = max((abs(math.log(v)) for v in finite if v > 0), default=0.0)
                spread = max(spread, 0.01)
                norm = TwoSlopeNorm(vcenter=1.0, vmin=math.exp(-spread),
                                                      vmax=math.exp(spread))  # fmt: skip
                im = ax.imshow(values, origin="lower", cmap="RdYlGn", aspect="auto", norm=norm)
                for yi, row in enumerate(values):
                    for xi, v in enumerate(row):
                        if not math.isnan(v):
                            ax.text(xi, yi, f"{v:.3f}", ha="center", va="center", fontsize=7)
                        data.append({"kernel": kernel, x_axis: xs[xi], y_axis: ys[yi],
                                     metric: None if math.isnan(v) else v})  # fmt: skip
                ax.set_xticks(range(len(xs)), [_label(x) for x in xs], rotation=30, fontsize=7)
                ax.set_yticks(range(len(ys)), [_label(y) for y in ys], fontsize=7)
                ax.set_xlabel(x_axis)
                ax.set_ylabel(y_axis)
                ax.set_title(kernel, fontsize=9)
                fig.colorbar(im, ax=ax, fraction=0.046)
            fig.suptitle(f"{title} (geomean over the other axes)", fontsize=10)
            save(fig, f"heatmap_{metric}", data)

    # cycles vs on-chip SRAM, both designs, and the Pareto front per kernel
    designs = [v for v in ("enzyme", "tapeflow") if any(r["variant"] == v for r in rows)]
    if rows and designs:
        fig, axs = plt.subplots(1, len(kernels), figsize=(4.2 * len(kernels) + 0.4, 3.6),
                                squeeze=False)  # fmt: skip
        fig2, axs2 = plt.subplots(1, len(kernels), figsize=(4.2 * len(kernels) + 0.4, 3.6),
                                  squeeze=False)  # fmt: skip
        curve_data: list[dict[str, Any]] = []
        front_data: list[dict[str, Any]] = []
        colors = {"enzyme": "#31a354", "tapeflow": "#08519c"}
        for ax, ax2, kernel in zip(axs[0], axs2[0], kernels, strict=True):
            mine = [r for r in rows if r["kernel"] == kernel and r["variant"] in designs]
            for v in designs:
                best: dict[int, float] = {}
                for r in mine:
                    if r["variant"] == v:
                        s = r["sram_bytes"]
                        best[s] = min(best.get(s, math.inf), r["report.cycles"])
                sram = sorted(best)
                envelope, low = [], math.inf  # fewest cycles with AT MOST this SRAM
                for s_ in sram:
                    low = min(low, best[s_])
                    envelope.append(low)
                ax.step([s_ / 1024 for s_ in sram], envelope, where="post", marker="o", ms=3,
                        color=colors[v], label=bench_label(v))  # fmt: skip
                curve_data += [{"kernel": kernel, "variant": v, "sram_bytes": s_,
                                "min_cycles": best[s_], "min_cycles_up_to": e}
                               for s_, e in zip(sram, envelope, strict=True)]  # fmt: skip
            pts = [(float(r["sram_bytes"]), float(r["report.cycles"])) for r in mine]
            front = pareto_front(pts)
            for v in designs:
                sel = [i for i, r in enumerate(mine) if r["variant"] == v]
                ax2.scatter([pts[i][0] / 1024 for i in sel], [pts[i][1] for i in sel], s=10,
                            color=colors[v], alpha=0.4, label=bench_label(v))  # fmt: skip
            ax2.plot([pts[i][0] / 1024 for i in front], [pts[i][1] for i in front], "k-",
                     lw=0.8, label="Pareto front")  # fmt: skip
            for v in designs:  # each front point in its design's colour
                sel = [i for i in front if mine[i]["variant"] == v]
                ax2.scatter([pts[i][0] / 1024 for i in sel], [pts[i][1] for i in sel],
                            marker="s", s=30, color=colors[v], edgecolors="black", zorder=3,
                            label=f"front: {bench_label(v)}" if sel else None)  # fmt: skip
            for i in front:
                front_data.append({"kernel": kernel, "sram_bytes": int(pts[i][0]),
                                   "cycles": pts[i][1], "variant": mine[i]["variant"],
                                   **{a: mine[i].get(a) for a in axes if a != "kernel"}})
            for a in (ax, ax2):
                a.set_xscale("log", base=2)
                a.set_xlabel("on-chip SRAM: L1 + L2 (+ SPM capacity), KiB")
                a.set_ylabel("cycles")
                # whole cycle counts, not "+1.188e7" over a 0.03% range
                a.ticklabel_format(axis="y", style="plain", useOffset=False)
                a.set_title(kernel, fontsize=9)
                a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # off the data
        fig.suptitle("Fewest cycles with at most this much on-chip SRAM (any pass option)",
                     fontsize=10)  # fmt: skip
        fig2.suptitle("Pareto front of (cycles, on-chip SRAM), both designs", fontsize=10)
        save(fig, "cycles_vs_sram", curve_data)
        save(fig2, "pareto", front_data)
    if any(r["variant"] == "checkpoint" for r in rows):
        fig, data = _footprint_plot(plt, rows, kernels, axes)
        save(fig, "cycles_vs_footprint", data)
    return paths


def _footprint_plot(plt: Any, rows: list[dict[str, Any]], kernels: list[str],
                    axes: Sequence[str]) -> tuple[Any, list[dict[str, Any]]]:  # fmt: skip
    """Cycles against DRAM footprint (tape + snapshots), log-log, per kernel: the Enzyme
    layout, TapeFlow, and TapeFlow with checkpointing (one marker per machine; the
    checkpoint points that differ only in `snapshots` joined, labelled s=K)."""
    designs = [v for v in ("enzyme", "tapeflow", "checkpoint") if any(r["variant"] == v
                                                                      for r in rows)]  # fmt: skip
    colors = {"enzyme": "#31a354", "tapeflow": "#08519c", "checkpoint": "#e6550d"}
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    markers = dict(zip(machines, itertools.cycle("os^vDP"), strict=False))
    fig, axs = plt.subplots(1, len(kernels), figsize=(5.2 * len(kernels) + 0.4, 4.2),
                            squeeze=False)  # fmt: skip
    data: list[dict[str, Any]] = []
    others = [a for a in axes if a not in ("kernel", "snapshots")]
    for ax, kernel in zip(axs[0], kernels, strict=True):
        for v in designs:
            seen: set[tuple[Any, ...]] = set()
            curves: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in rows:
                if r["kernel"] != kernel or r["variant"] != v:
                    continue
                xy = (r["dram_footprint_bytes"], r["report.cycles"])
                if v == "checkpoint":
                    curves[json.dumps([r.get(a) for a in others])].append(r)
                elif (r["machine"], *xy) in seen:  # the same run at another snapshot count
                    continue
                seen.add((r["machine"], *xy))
                ax.scatter(xy[0] / 1024, xy[1], marker=markers[r["machine"]], s=24,
                           color=colors[v], zorder=3)  # fmt: skip
                data.append({"kernel": kernel, "variant": v, "dram_footprint_bytes": xy[0],
                             "cycles": xy[1],
                             **{a: r.get(a) for a in axes if a != "kernel"}})  # fmt: skip
                if v == "checkpoint":
                    ax.annotate(f"s={r['snapshots']}", (xy[0] / 1024, xy[1]), fontsize=6,
                                xytext=(3, 3), textcoords="offset points")  # fmt: skip
            for curve in curves.values():
                curve.sort(key=lambda r: r["snapshots"])
                ax.plot([r["dram_footprint_bytes"] / 1024 for r in curve],
                        [r["report.cycles"] for r in curve], lw=0.8, color=colors[v])  # fmt: skip
            for machine in machines:  # one legend entry per (design, machine)
                if any(r["kernel"] == kernel and r["variant"] == v and r["machine"] == machine
                       for r in rows):  # fmt: skip
                    label = bench_label(v) + (f" ({machine})" if len(machines) > 1 else "")
                    ax.scatter([], [], marker=markers[machine], color=colors[v], label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("DRAM footprint: tape + checkpoint snapshots, KiB")
        ax.set_ylabel("cycles")
        ax.set_title(kernel, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Cycles against the gradient's DRAM footprint", fontsize=10)
    return fig, data


def bench_label(variant: str) -> str:
    return CHECKPOINT_LABEL if variant == "checkpoint" else LABELS.get(variant, variant)


def _sort_key(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, int | float) and not isinstance(v, bool) else (1, str(v))


def _label(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v % 1024 == 0:
        return f"{v // 1024}K"
    return str(v)
