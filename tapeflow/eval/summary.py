"""What `tapeflow-bench` reports: per-kernel rows (`summarize_kernel`), geometric means
(`geomeans`, controls excluded), the SRAM comparisons and the JSON (`to_json`).
Definitions are in `METRICS_DOC`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tapeflow.baselines.enzyme_mlir import KNOWN_BUGS
from tapeflow.eval.agreement import normwise_error, relative_error
from tapeflow.eval.jobs import (
    AGREEMENT,
    KIB,
    SPM_TOLERANCE,
    SWEEP_MAX,
    TOLERANCE,
    VARIANTS,
    kernels,
)
from tapeflow.eval.run import compare_gradients

METRICS_DOC = """\
Definitions (all numbers from the hardware model, hwmodel/timing/phases.py and hwmodel/report.py):
- speedup = Enzyme-layout cycles / variant cycles (> 1: faster than the baseline).
- ideal tape = the Enzyme layout's program with every tape access counted but free (no
  memory access, port or latency: gem5-SALAM's "ad"); captured = the share of the ideal
  that TapeFlow captures, (Enzyme - TapeFlow) / (Enzyme - ideal tape) in cycles (1 =
  all of it; > 1 or < 0 possible: TapeFlow's program is not the Enzyme layout's); "-"
  where the denominator is <= 0 (the free tape saves nothing: nothing to capture).
- DRAM accesses (gem5-SALAM's count, their cache_stat_extractor.py): last-level cache
  (L2, their cluster cache) misses, no write-backs; plus ceil(free tape reads / 8) for the
  ideal tape (their "ad" adds ceil(tape DRAM reads / 8) 64-byte requests) and the 64-byte
  DMA requests for TapeFlow.
- scratchpad needed: TapeFlow's scratchpad is chosen, not fixed (issue 29 item 5). TapeFlow
  is compiled and run with each scratchpad of 512 B, 1, 2, 4, 8, 16 and 32 KiB (its
  budget and the machine's spm.size, at the machine's own caches); scratchpad needed = the
  smallest whose cycles are within 2% of the best of the seven. Its SRAM counts only when
  the program at that size uses the scratchpad ("unused": TapeFlow kept Enzyme's layout).
  Without --spm-sweep (scripts/bench turns it on) it is the machine's spm.size.
- energy ratios = Enzyme-layout energy / TapeFlow energy at the scratchpad needed (> 1:
  TapeFlow uses less): on-chip = compute + L1 + L2 + SPM + DMA engine (+ SRAM leakage
  when the machine sets it); on-chip memory = L1 + L2 + SPM (what the paper's 8x claim is
  about); total = on-chip + DRAM. The JSON's `*_machine_spm` fields are the same ratios
  with TapeFlow at the machine's spm.size (this report's meaning before the sweep).
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
  the same from its own L2 sweep (the machine's L1 + L2 without one; swept with the
  machine's spm.size) plus the scratchpad needed; SRAM ratio = Enzyme SRAM needed /
  TapeFlow SRAM needed (`ratio_machine_spm` in the JSON: with the machine's spm.size). The
  iso-SRAM speedup and the SRAM for the same cycles keep the machine's spm.size.
- tape = peak DRAM tape storage of the Enzyme layout (bytes); tape/L2 = tape over the
  machine's L2 size; inflation = tape / bytes of every array argument of the primal.
- controls: kernels whose Enzyme-layout tape is empty (nothing cached). They are shown
  but excluded from the geometric means.
- gradients: every memref argument after the gradient run (shadows = gradients, and the
  primal buffers the kernel overwrites) must be bit-identical across the variants.
- Enzyme-MLIR (with the optional extra `enzyme`): real Enzyme's gradient of the same
  kernel, another program, so it agrees with the Enzyme layout's when each array's
  normwise relative error is at most 1e-12 (max |a - b| / max |b|, b the Enzyme
  layout's); the largest per-entry error |a - b| / max(|a|, |b|) is shown beside it, as
  entries where a sum cancels differ more. A disagreement is shown in its table and as a
  warning, not as an error of the run (the check of our variants is theirs); nor is a
  kernel it refuses, listed with Enzyme's message. Its tape = its cache buffers and
  `enzyme.init` caches at their peak."""


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def ratio(a: float, b: float) -> float | None:
    if not b or not math.isfinite(a) or not math.isfinite(b):
        return None
    return a / b


def captured_share(enzyme: float, tapeflow: float, ideal: float) -> float | None:
    """(enzyme - tapeflow) / (enzyme - ideal) cycles: the share of the free tape's saving
    that TapeFlow captures; None when the free tape saves nothing (enzyme <= ideal)."""
    gap = enzyme - ideal
    return (enzyme - tapeflow) / gap if gap > 0 else None


def dram_accesses(report: dict[str, Any], request: int) -> int:
    """DRAM accesses as gem5-SALAM counts them (METRICS_DOC): L2 misses, no write-backs,
    + ceil(free tape reads / 8) + `request`-byte DMA requests."""
    free_reads = report["ops"].get("ideal_tape", {}).get("loads", 0)
    return (report["levels"]["L2"]["misses"] + -(-free_reads // 8)
            + -(-report["dma"]["bytes"] // request))


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
        "iso_ratio": ratio(e, t) if e is not None and t is not None else None,
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


def too_small(point: dict[str, Any]) -> bool:
    """A scratchpad sweep's point TapeFlow cannot compile for: its tile buffers, one record
    of each region at the least, do not fit that scratchpad (`layers.layer_size`)."""
    return "is too small for @" in (point.get("error") or "")


def scratchpad_needed(points: list[dict[str, Any]],
                      tolerance: float = SPM_TOLERANCE) -> dict[str, Any]:  # fmt: skip
    """The point of a scratchpad sweep (`Job.spm_sweep`) with the smallest scratchpad whose
    cycles are within `tolerance` of the best point's (points that failed, e.g. too small
    for one record per tile buffer, left out), with `best_cycles`; {} without points."""
    ran = sorted((p for p in points if not p.get("error")), key=lambda p: p["spm_bytes"])
    if not ran:
        return {}
    best = min(p["cycles"] for p in ran)
    point = next(p for p in ran if p["cycles"] <= best * (1 + tolerance))
    return {**point, "best_cycles": best}


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
    captured: float | None = None  # the share of the ideal tape TapeFlow captures
    spm_sweep: list[dict[str, Any]] = field(default_factory=list)  # TapeFlow per scratchpad
    energy_ratio_machine_spm: dict[str, float | None] = field(default_factory=dict)
    """`energy_ratio` with TapeFlow at the machine's spm.size (without a sweep: equal)."""
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per baseline variant that was run: `refused` (its error, or None), per argument
    `normwise_error` (max |a - b| / max |b|) and `entry_error` (the largest per entry),
    their largest `max` and `max_entry`, `agrees` (max <= `AGREEMENT`), and when it does
    not, a `note` saying by how much. A baseline is another program (Enzyme-MLIR 0.0.16
    has its own bugs), so its disagreement is reported, not a failure of our variants'
    check (`grads_ok`)."""


def _variant_summary(res: dict[str, Any], request: int) -> dict[str, Any]:
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
        "dram_accesses": dram_accesses(r, request),
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
    errors = [f"{v}: {r['error']}" for v, r in results.items()
              if r.get("error") and v in VARIANTS]  # fmt: skip
    good = {v: r for v, r in results.items() if not r.get("error")}
    request = int(machine.get("dma", "request"))
    layouts = {v: r for v, r in good.items() if v in VARIANTS}
    grads_ok, notes = compare_gradients(layouts) if len(layouts) == len(VARIANTS) else (False, [])
    variants = {v: _variant_summary(r, request) for v, r in good.items()}
    others = {v: baseline_agreement(v, r, layouts.get("enzyme")) for v, r in results.items()
              if v not in VARIANTS}  # fmt: skip
    for v, b in others.items():
        if b["refused"] is None and not b["agrees"]:
            over = ", ".join(k for k, e in b["normwise_error"].items() if e > AGREEMENT)
            b["note"] = (f"{v}: normwise relative error (max |a - b| / max |b| per array, b "
                         f"the Enzyme layout's) {b['max']:.3g} > {AGREEMENT:g} ({over}); "
                         f"largest per entry {b['max_entry']:.3g}")  # fmt: skip
        if (b["refused"] is not None or not b["agrees"]) and v == "enzyme-mlir":
            b["known_bug"] = KNOWN_BUGS.get(name)
            if b["known_bug"] and "note" in b:
                b["note"] += f"; {b['known_bug']}"
    base = variants.get("enzyme")
    speedup: dict[str, float | None] = {}
    eratio: dict[str, float | None] = {}
    eratio_r: dict[str, float | None] = {}
    for v in VARIANTS[1:]:
        speedup[v] = ratio(base["cycles"], variants[v]["cycles"]) if base and v in variants \
            else None  # fmt: skip
    points = good.get("tapeflow", {}).get("spm_sweep", [])
    spm_need = scratchpad_needed(points)
    eratio_m: dict[str, float | None] = {}
    for key in ("on_chip_pj", "on_chip_memory_pj", "total_pj"):
        t = variants.get("tapeflow")
        r = variants.get("regions")
        eratio_m[key] = ratio(base[key], t[key]) if base and t else None
        eratio[key] = ratio(base[key], spm_need[key]) if base and spm_need else eratio_m[key]
        eratio_r[key] = ratio(base[key], r[key]) if base and r else None
    for p in points:
        if p.get("error") and not too_small(p):
            errors.append(f"tapeflow with a {p['spm_bytes']}-byte scratchpad: {p['error']}")
        elif not p.get("error") and not p["gradients_identical"]:
            grads_ok = False
            notes.append(f"tapeflow with a {p['spm_bytes']}-byte scratchpad: gradients differ "
                         "from TapeFlow's at the machine's scratchpad")  # fmt: skip
    tape = base["tape_bytes"] if base else 0
    pbytes = (kernel or kernels()[name]).primal_bytes(size)
    sweep = good.get("enzyme", {}).get("sweep", [])
    need = cache_needed(sweep, tolerance)
    tf = variants.get("tapeflow")
    ideal = variants.get("ideal-tape")
    captured = captured_share(base["cycles"], tf["cycles"], ideal["cycles"]) \
        if base and tf and ideal else None  # fmt: skip
    hwm = tf["spm_high_water_bytes"] if tf else 0
    cache = machine.l1.size + machine.l2.size
    spm = tf["on_chip_sram_bytes"] - cache if tf else 0  # the scratchpad it uses, if any
    tsweep = good.get("tapeflow", {}).get("sweep", [])
    tneed = cache_needed(tsweep, tolerance) if tsweep else {}
    tf_cache = tneed["cache_bytes"] if tneed else cache
    # The scratchpad TapeFlow needs: at the sweep's choice (when it uses it), else the machine's.
    spm_needed = spm_need["on_chip_sram_bytes"] - cache if spm_need else spm
    tf_needed = tf_cache + spm_needed
    sram = {
        "enzyme_cache_needed_bytes": need.get("cache_bytes"),
        "enzyme_l2_needed_bytes": need.get("l2_bytes"),
        "enzyme_needed_at_smallest_point": need.get("at_smallest"),
        "enzyme_on_chip_bytes": base["on_chip_sram_bytes"] if base else None,
        "tapeflow_on_chip_bytes": tf["on_chip_sram_bytes"] if tf else None,
        "tapeflow_spm_bytes": spm,
        "tapeflow_spm_high_water_bytes": hwm,
        "tapeflow_sram_needed_bytes": tf_needed if tf else None,
        "ratio": ratio(need["cache_bytes"], tf_needed) if need and tf else None,
        "machine_cache_bytes": cache,
        "tapeflow_spm_needed_bytes": spm_need.get("spm_bytes"),
        "tapeflow_spm_sram_bytes": spm_needed,  # the scratchpad in tapeflow_sram_needed_bytes
        "tapeflow_spm_needed_used": bool(spm_need.get("spm_high_water_bytes")),
        "tapeflow_spm_needed_cycles": spm_need.get("cycles"),
        "tapeflow_spm_best_cycles": spm_need.get("best_cycles"),
        "tapeflow_sram_needed_machine_spm_bytes": tf_cache + spm if tf else None,
        "ratio_machine_spm": ratio(need["cache_bytes"], tf_cache + spm) if need and tf else None,
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
            speedup["tapeflow_iso_sram"] = ratio(p["cycles"], tf["cycles"])
            sram["iso_sram_enzyme_cache_bytes"] = p["cache_bytes"]
        if less:
            p = max(less, key=lambda q: q["cache_bytes"])
            speedup["tapeflow_iso_sram_upper"] = ratio(p["cycles"], tf["cycles"])
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
        captured=captured,
        baselines=others,
        spm_sweep=points,
        energy_ratio_machine_spm=eratio_m,
    )


def baseline_agreement(variant: str, res: dict[str, Any],
                       enzyme: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """A baseline's gradients against the Enzyme layout's (`KernelRow.baselines`)."""
    none = {"normwise_error": {}, "entry_error": {}, "max": None, "max_entry": None}
    if res.get("error"):
        return {"refused": res["error"], **none, "agrees": False}
    if enzyme is None:
        return {"refused": None, **none, "agrees": False}
    mine, ours = res["grads"], enzyme["grads"]
    inf = float("inf")
    norm = {k: normwise_error(ours[k], mine[k]) if k in mine else inf for k in ours}
    entry = {k: relative_error(ours[k], mine[k]) if k in mine else inf for k in ours}
    worst = max(norm.values(), default=0.0)
    return {"refused": None, "normwise_error": norm, "entry_error": entry, "max": worst,
            "max_entry": max(entry.values(), default=0.0), "agrees": worst <= AGREEMENT}  # fmt: skip


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
        "on_chip_energy_ratio_machine_spm": geomean(
            r.energy_ratio_machine_spm.get("on_chip_pj") for r in use),
        "on_chip_memory_energy_ratio_machine_spm": geomean(
            r.energy_ratio_machine_spm.get("on_chip_memory_pj") for r in use),
        "total_energy_ratio_machine_spm": geomean(
            r.energy_ratio_machine_spm.get("total_pj") for r in use),
        "sram_ratio": geomean(r.sram.get("ratio") for r in use),
        "sram_ratio_machine_spm": geomean(r.sram.get("ratio_machine_spm") for r in use),
        "sram_total_ratio": geomean(r.sram.get("total_ratio") for r in use),
        "sram_iso_ratio": geomean(r.sram.get("iso_ratio") for r in use),
        "inflation": geomean(r.inflation for r in use),
    }


def salam_comparison(rows: Sequence[KernelRow], kernels: dict[str, Any],
                     ratios: dict[str, dict[int, float]], cache: int, l2: int = 0,
                     ) -> list[dict[str, Any]]:  # fmt: skip
    """Suite salam: per kernel, our speedup with both designs' L2 (the cluster cache) at
    `cache` bytes (from the L2 sweeps) beside gem5-SALAM's own orig/ad total-cycle ratio
    at that cluster-cache size (`ratios`, `tapeflow.eval.kernels.salam_ratios`), and, when
    `cache` is the machine's L2 (`l2`), like for like with theirs: our Enzyme layout over
    our ideal tape (their "ad" is a free tape)."""
    out = []
    for r in rows:
        csv = getattr(kernels.get(r.kernel), "csv", "") or r.kernel.split("/")[-1]
        e = {p["l2_bytes"]: p["cycles"] for p in r.sweep}
        t = {p["l2_bytes"]: p["cycles"] for p in r.sweep_tapeflow}
        ours = ratio(e[cache], t[cache]) if cache in e and cache in t else None
        theirs = ratios.get(csv, {}).get(cache)
        e0, i0 = (r.variants.get(v, {}).get("cycles") for v in ("enzyme", "ideal-tape"))
        ideal = ratio(e0, i0) if cache == l2 and e0 and i0 else None
        out.append({"kernel": r.kernel, "csv": csv, "cache_bytes": cache,
                    "speedup_ours": ours, "speedup_gem5_salam": theirs,
                    "speedup_ideal_ours": ideal,
                    "ours_over_theirs": ratio(ours, theirs) if ours and theirs else None})
    return out


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
                "captured_share": r.captured,
                "energy_ratio_tapeflow": r.energy_ratio,
                "energy_ratio_tapeflow_machine_spm": r.energy_ratio_machine_spm,
                "energy_ratio_regions": r.energy_ratio_regions,
                "sram": r.sram,
                "sweep": r.sweep,
                "sweep_tapeflow": r.sweep_tapeflow,
                "spm_sweep": r.spm_sweep,
                "variants": r.variants,
                "baselines": r.baselines,
            }
            for r in rows
        ],
        "definitions": METRICS_DOC,
    }
