"""The Markdown of `tapeflow-bench`: one table per machine (`markdown`), suite salam's
comparison with gem5-SALAM and the per-machine geomeans (`summary_markdown`)."""

from __future__ import annotations

import functools
import resource
from collections.abc import Sequence
from typing import Any

from tapeflow.eval.jobs import (
    AGREEMENT,
    BASELINES,
    ENERGY_COMPONENTS,
    KIB,
    LABELS,
    LLC_FACTOR,
    MIB,
    VARIANTS,
    pipeline_spec,
)
from tapeflow.eval.summary import METRICS_DOC, KernelRow, geomean, ratio
from tapeflow.hwmodel.config import DEFAULT_MACHINE
from tapeflow.hwmodel.timing import FORMULAS, rule_of


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


DESIGNS = ("enzyme", "tapeflow", "ideal-tape")
"""The designs the captured share compares (`summary.captured_share`)."""


def fmt_share(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def designs_table(rows: Sequence[KernelRow]) -> list[str]:
    """Per kernel: the cycles and DRAM accesses (gem5-SALAM's count) of each design in
    `DESIGNS`, and the share of the ideal tape that TapeFlow captures."""
    shown = [r for r in rows if any(v in r.variants for v in DESIGNS)]
    if not shown:
        return []
    labels = [LABELS[v] for v in DESIGNS]
    out = ["### Designs: cycles, the share of the ideal tape TapeFlow captures, DRAM accesses",
           "",
           "captured = (Enzyme layout - TapeFlow) / (Enzyme layout - ideal tape) cycles; "
           "`-` where the ideal tape saves no cycles (nothing to capture). DRAM accesses as "
           "gem5-SALAM counts them (L2 misses, no write-backs; + ceil(free tape reads / 8) "
           "for the ideal tape, + 64-byte DMA requests for TapeFlow).",
           "",
           "| kernel | " + " | ".join(f"{x} cycles" for x in labels) + " | captured | "
           + " | ".join(f"{x} DRAM accesses" for x in labels) + " |",
           "|---|" + "---:|" * (2 * len(DESIGNS) + 1)]  # fmt: skip
    for r in shown:
        cells = [f"{r.variants[v]['cycles']:,.0f}" if v in r.variants else "-" for v in DESIGNS]
        cells.append(fmt_share(r.captured))
        cells += [f"{r.variants[v]['dram_accesses']:,}" if v in r.variants else "-"
                  for v in DESIGNS]  # fmt: skip
        out.append(f"| {r.kernel} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def markdown(rows: Sequence[KernelRow], gm: dict[str, Any], machine: Any, *,
             size: str, header: dict[str, Any]) -> str:  # fmt: skip
    out: list[str] = []
    l2 = machine.l2.size
    suite = header.get("suite", "bundled")
    what = ("kernel files, sizes and inputs as given" if suite == "files"
            else f"suite {suite}, {size} sizes")  # fmt: skip
    out.append(f"## tapeflow-bench: {what}, machine `{header['machine_name']}`")
    out.append("")
    out.append(f"- command: `{header['command']}`")
    load = header.get("load_average")
    out.append(f"- date: {header['date']}; wall time {header['wall_s']:.0f} s with "
               f"{header['jobs']} worker(s) on {header.get('cpu_count')} core(s); CPU time "
               f"of the runs {header.get('cpu_s', 0.0):.0f} s"
               + (f"; load average at the end {load[0]:.1f}" if load else ""))  # fmt: skip
    if header.get("commit"):
        out.append(f"- source: commit {header['commit']}")
    for line in header.get("skipped", ()):
        out.append(f"- {line}")
    out.append(f"- machine: {header['machine_desc']}")
    out.append(f"- TapeFlow pipeline: `{header['tapeflow_spec']}`; Enzyme layout: "
               f"`{pipeline_spec('enzyme', 0, 0, 0)}`")  # fmt: skip
    out.append(f"- cache sweep (Enzyme layout, and TapeFlow when swept): L2 = "
               f"{', '.join(fmt_bytes(c) for c in header['sweep'])} "
               f"(L1 {fmt_bytes(machine.l1.size)} fixed)")  # fmt: skip
    if header.get("spm_sweep"):
        out.append(f"- scratchpad sweep (TapeFlow, at the machine's caches): "
                   f"{', '.join(fmt_bytes(c) for c in header['spm_sweep'])}; scratchpad "
                   f"needed = the smallest within {100 * header['spm_tolerance']:g}% of "
                   "TapeFlow's best cycles over it; the energy ratios and the SRAM needed "
                   "take TapeFlow at that scratchpad (speedups: at the machine's "
                   f"{fmt_bytes(machine.spm_size)})")  # fmt: skip
    out.append("")
    out.append("| kernel | tape (Enzyme) | tape (TapeFlow) | tape / L2 | inflation | "
               "Enzyme cycles | regions speedup | TapeFlow speedup | iso-SRAM speedup | "
               "on-chip energy | on-chip mem. energy | total energy | Enzyme SRAM needed | "
               "TapeFlow SRAM needed | TapeFlow SPM needed | TapeFlow SPM high-water | "
               "SRAM ratio | gradients |")
    out.append("|---|" + "---:|" * 16 + "---|")
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
        tf_tape = r.variants.get("tapeflow", {}).get("tape_bytes")
        out.append(
            f"| {name} | {fmt_bytes(r.tape_bytes)} | {fmt_bytes(tf_tape)} | {tape_l2} | "
            f"{r.inflation:.2f} | "
            f"{e.get('cycles', float('nan')):,.0f} | {fmt_x(r.speedup.get('regions'))} | "
            f"{fmt_x(r.speedup.get('tapeflow'))} | {fmt_iso(r.speedup)} | "
            f"{fmt_x(r.energy_ratio.get('on_chip_pj'))} | "
            f"{fmt_x(r.energy_ratio.get('on_chip_memory_pj'))} | "
            f"{fmt_x(r.energy_ratio.get('total_pj'))} | {need_s} | "
            f"{fmt_bytes(r.sram['tapeflow_sram_needed_bytes'])} | {fmt_spm_needed(r.sram)} | "
            f"{fmt_bytes(r.sram['tapeflow_spm_high_water_bytes'])} | "
            f"{fmt_x(r.sram['ratio'], 2)} | {status} |"
        )
    out.append(
        f"| **geomean** ({len(gm['kernels'])} kernels) | | | | {fmt_x(gm['inflation'])} | | "
        f"{fmt_x(gm['speedup_regions'])} | **{fmt_x(gm['speedup_tapeflow'])}** | "
        f"**{fmt_x(gm['speedup_tapeflow_iso_sram'])}** | "
        f"**{fmt_x(gm['on_chip_energy_ratio'])}** | {fmt_x(gm['on_chip_memory_energy_ratio'])} | "
        f"{fmt_x(gm['total_energy_ratio'])} | | | | | **{fmt_x(gm['sram_ratio'], 2)}** | |"
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
            which = "the default sizes" if size == "default" and suite != "files" else \
                "these sizes"  # fmt: skip
            out.append(f"NOT every Enzyme-layout tape is >= {LLC_FACTOR:g}x the last-level "
                       f"cache (L2 = {fmt_bytes(l2)}) at {which}: {per} "
                       f"(below: {', '.join(r.kernel for r in small)}).")  # fmt: skip
    out.append("")
    out += designs_table(rows)
    # Energy breakdown.
    out.append("### Energy by component (µJ)")
    out.append("")
    out.append("| kernel | variant | " + " | ".join(ENERGY_COMPONENTS) +
               " | on-chip | total | cycles |")  # fmt: skip
    out.append("|---|---|" + "---:|" * (len(ENERGY_COMPONENTS) + 3))
    for r in rows:
        for v in (*VARIANTS, *BASELINES):
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
    rule = rule_of(machine)
    stall = {"lockstep": ["T_hit"], "datapath": ["T_datapath"]}.get(rule, [])
    terms = ["T_OL", "T_nOL", "T_L2", "T_DRAM", *stall, "T_exposed", "T_late", "T_core"]
    phase = FORMULAS[rule]
    out.append(f"### Cycle terms (hwmodel/timing/phases.py: T_core = sum over phases of {phase}; "
               "T_DRAM includes waiting for DMA on the shared channel; "
               f"cycles = T_core + stalls + drain), {unit_name}")  # fmt: skip
    out.append("")
    out.append("| kernel | variant | " + " | ".join(terms) + " | "
               "DMA stall | drain | cycles | DRAM MiB | DMA MiB |")  # fmt: skip
    out.append("|---|---|" + "---:|" * (len(terms) + 5))
    for r in rows:
        for v in (*VARIANTS, *BASELINES):
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
                fmt_x(ratio(e[c], t[c])) if c in e and c in t else "-" for c in sweep_caps
            ) + " |")  # fmt: skip
        out.append("")
    out += spm_table(rows, header.get("spm_sweep", []), gm)
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
                   "TapeFlow SPM (needed, when used) | "
                   "TapeFlow total | ratio |")  # fmt: skip
        out.append("|---|---:|---:|---:|---:|---:|")
        for r in rows:
            if not r.sweep_tapeflow:
                continue
            s = r.sram
            out.append(f"| {r.kernel} | {fmt_bytes(s['enzyme_cache_needed_bytes'])} | "
                       f"{fmt_bytes(s.get('tapeflow_cache_needed_bytes'))} | "
                       f"{fmt_bytes(s['tapeflow_spm_sram_bytes'])} | "
                       f"{fmt_bytes(s.get('tapeflow_total_needed_bytes'))} | "
                       f"{fmt_x(s.get('total_ratio'), 2)} |")  # fmt: skip
        out.append(f"| **geomean** | | | | | **{fmt_x(gm.get('sram_total_ratio'), 2)}** |")
        out.append("")
    out += real_enzyme_markdown(rows)
    bad = [r for r in rows if not r.grads_ok]
    for r in bad:
        for n in r.errors + r.grad_notes:
            out.append(f"- **{r.kernel}**: {n}")
    if bad:
        out.append("")
    out.append(METRICS_DOC)
    return "\n".join(out) + "\n"


def fmt_spm_needed(sram: dict[str, Any]) -> str:
    """The scratchpad needed (`summary.scratchpad_needed`), "unused" when TapeFlow's program
    at that size uses none; "-" without a scratchpad sweep."""
    need = sram.get("tapeflow_spm_needed_bytes")
    if need is None:
        return "-"
    return fmt_bytes(need) + ("" if sram.get("tapeflow_spm_needed_used") else " (unused)")


def spm_table(rows: Sequence[KernelRow], caps: Sequence[int], gm: dict[str, Any]) -> list[str]:
    """TapeFlow's cycles per scratchpad of the sweep, the scratchpad needed, the whole-chip
    SRAM and the on-chip energy ratio there (and at the machine's scratchpad)."""
    swept = [r for r in rows if r.spm_sweep]
    if not swept:
        return []
    out = ["### TapeFlow cycles vs scratchpad (relative to the best point; * = scratchpad "
           "needed, `-`: one record per tile buffer does not fit)", "",
           "| kernel | " + " | ".join(fmt_bytes(c) for c in caps) + " | SPM needed | "
           "TapeFlow SRAM there (L1+L2 needed + SPM) | on-chip energy ratio there | "
           "on-chip energy ratio at the machine's SPM |",
           "|---|" + "---:|" * (len(caps) + 4)]  # fmt: skip
    for r in swept:
        by = {p["spm_bytes"]: p for p in r.spm_sweep if not p.get("error")}
        best = r.sram.get("tapeflow_spm_best_cycles")
        need = r.sram.get("tapeflow_spm_needed_bytes")
        cells = ["-" if c not in by or not best else
                 f"{by[c]['cycles'] / best:.3f}" + ("*" if c == need else "") for c in caps]
        out.append(f"| {r.kernel} | " + " | ".join(cells) + f" | {fmt_spm_needed(r.sram)} | "
                   f"{fmt_bytes(r.sram['tapeflow_sram_needed_bytes'])} | "
                   f"{fmt_x(r.energy_ratio.get('on_chip_pj'))} | "
                   f"{fmt_x(r.energy_ratio_machine_spm.get('on_chip_pj'))} |")  # fmt: skip
    out.append("| **geomean** |" + " |" * len(caps) + " | | "
               f"**{fmt_x(gm.get('on_chip_energy_ratio'))}** | "
               f"{fmt_x(gm.get('on_chip_energy_ratio_machine_spm'))} |")
    return [*out, ""]


def real_enzyme_markdown(rows: Sequence[KernelRow]) -> list[str]:
    """Real Enzyme-MLIR beside our Enzyme layout and TapeFlow (when it ran): tape bytes,
    cycles, energy, its gradient's agreement with ours, or its refusal."""
    ran = [r for r in rows if "enzyme-mlir" in r.baselines]
    if not ran:
        return []
    out = ["### Real Enzyme (Enzyme-MLIR) beside the Enzyme layout and TapeFlow", "",
           "Tape = Enzyme-MLIR's cache buffers and caches at their peak, our Enzyme layout's "
           "arrays, TapeFlow's DRAM tape; cycles and on-chip energy relative to "
           f"Enzyme-MLIR's (> 1: Enzyme-MLIR's program is slower / uses more); gradient: the "
           f"largest normwise relative error against ours, max |a - b| / max |b| per array "
           f"(at most {AGREEMENT:g} to agree), and the largest per entry.", "",
           "| kernel | tape (Enzyme-MLIR) | tape (Enzyme layout) | tape (TapeFlow) | "
           "Enzyme-MLIR cycles | Enzyme layout speedup | TapeFlow speedup | "
           "TapeFlow on-chip energy | gradient |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for r in ran:
        b = r.baselines["enzyme-mlir"]
        if b["refused"] is not None:  # Enzyme's own refusal, or a failure to run its output
            message = b["refused"].split(": ", 1)[-1].replace("|", "/")
            what = "refused" if "Enzyme-MLIR cannot differentiate" in message else "failed"
            why = f" ({b['known_bug']})" if b.get("known_bug") else ""
            out.append(f"| {r.kernel} | - | - | - | - | - | - | - | {what}: {message}{why} |")
            continue
        m, e, t = (r.variants.get(v, {}) for v in ("enzyme-mlir", "enzyme", "tapeflow"))
        verdict = "agrees" if b["agrees"] else "**DIFFERS**"
        why = f": {b['known_bug']}" if not b["agrees"] and b.get("known_bug") else ""
        err = "-" if b["max"] is None else f"{b['max']:.2g}; per entry {b['max_entry']:.2g}"
        out.append(
            f"| {r.kernel} | {fmt_bytes(m.get('tape_bytes'))} | {fmt_bytes(e.get('tape_bytes'))} "
            f"| {fmt_bytes(t.get('tape_bytes'))} | {m.get('cycles', float('nan')):,.0f} | "
            f"{fmt_x(ratio(m.get('cycles', 0.0), e.get('cycles', 0.0)))} | "
            f"{fmt_x(ratio(m.get('cycles', 0.0), t.get('cycles', 0.0)))} | "
            f"{fmt_x(ratio(m.get('on_chip_pj', 0.0), t.get('on_chip_pj', 0.0)))} | "
            f"{verdict} ({err}){why} |"
        )  # fmt: skip
    return [*out, ""]


def machine_desc(machine: Any, machine_file: str | None, sets: Sequence[str]) -> str:
    """One line on `machine` for the report's header: where it comes from (defaults.toml,
    `machine_file`, the `--set` overrides `sets`) and its main figures."""
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


def salam_markdown(compare: Sequence[dict[str, Any]], machine: str, cache: int) -> str:
    """The summary of suite salam on one machine: our speedup beside gem5-SALAM's."""
    out = [f"### Suite salam on `{machine}`: our speedup beside gem5-SALAM's "
           f"(cluster cache = L2 = {fmt_bytes(cache)})", ""]
    out.append("gem5-SALAM's = orig / ad total cycles of its own result CSVs "
               "(benchmarks/kernels/salam/gem5_salam_results.csv); ours = Enzyme-layout / "
               "TapeFlow cycles with both designs' L2 at that size (from the L2 sweeps); "
               "like for like with theirs (their ad is a free tape): Enzyme-layout / ideal-tape "
               "cycles, at the machine's own L2 only.")
    out.append("")
    out.append("| kernel | gem5-SALAM CSV | our speedup | gem5-SALAM speedup | ours / theirs | "
               "our Enzyme / ideal tape |")
    out.append("|---|---|---:|---:|---:|---:|")
    for c in compare:
        out.append(f"| {c['kernel']} | {c['csv']} | {fmt_x(c['speedup_ours'])} | "
                   f"{fmt_x(c['speedup_gem5_salam'])} | {fmt_x(c['ours_over_theirs'])} | "
                   f"{fmt_x(c.get('speedup_ideal_ours'))} |")
    both = [c for c in compare if c["speedup_ours"] and c["speedup_gem5_salam"]]
    out.append(f"| **geomean** ({len(both)} with both) | | "
               f"**{fmt_x(geomean(c['speedup_ours'] for c in both))}** | "
               f"**{fmt_x(geomean(c['speedup_gem5_salam'] for c in both))}** | "
               f"{fmt_x(geomean(c['ours_over_theirs'] for c in both))} | "
               f"{fmt_x(geomean(c.get('speedup_ideal_ours') for c in compare))} |")
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


def print_timings(phases: dict[str, float], timings: dict[str, Any], file: Any) -> None:
    """Where the wall and CPU time of a run went (`--timings`), on `file`."""
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
