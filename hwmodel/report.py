"""The hardware model's report: cycles and their terms, traffic per level, energy, SRAM.

Definitions (what each number counts):

- `levels.L1.bytes`: bytes the core loaded/stored through the caches, plus every line
  filled into L1 or written back out of it. `L1.word_accesses` is the same in 64-bit words
  (a core access of up to 8 bytes is one word access), and is what L1 energy charges.
- `levels.L2.bytes`: lines L2 supplied to L1, lines filled from DRAM, write-backs received
  from L1 and write-backs sent to DRAM, times the line size. Without an L1 (`l1.size = 0`)
  the core's accesses are L2 accesses (one word access each, L1 counts 0); with
  `dma.path = "l2"` the DMA's bytes go through the L2 too (bytes / 8 word accesses).
- `levels.SPM.bytes`: bytes the core moved to/from the scratchpad plus DMA bytes.
- `dram.bytes_read` / `bytes_written`: cache lines read/written plus DMA bytes.
- Energy: `compute` (op classes, plus the optional per-instruction and register-file
  terms), `L1`, `L2`, `SPM`, `DMA` (engine), `DRAM`, `leakage` (SRAM static power times
  run time: `leakage.sram_mw_per_kib` x the design's own SRAM, `sram.on_chip_bytes` in KiB,
  x ns; on by default, its value from CACTI 7, defaults.toml). `on_chip = compute + L1 + L2 + SPM
  + DMA + leakage`, `on_chip_memory = L1 + L2 + SPM` (the memory part, which TapeFlow's
  on-chip energy claim is about), `off_chip = DRAM`, `total = on_chip + off_chip`.
- `sram.on_chip_bytes`: the design's whole on-chip SRAM, L1 + L2 + the scratchpad's
  capacity when the program uses the scratchpad (a design that never touches it, such as
  the Enzyme layout, needs none); what every SRAM ratio of tapeflow-bench and
  tapeflow-sweep compares (issue 18: counting TapeFlow's scratchpad high-water mark alone
  against the baseline's L1 + L2 left TapeFlow's own caches and scratchpad out).
- `sram.in_use`: the on-chip SRAM the tape needs: the scratchpad's high-water mark when the
  program used the scratchpad, else the cache capacity (L1 + L2) the baseline's tape goes
  through. Both numbers are also given.
- `tape_bytes`: the peak of live DRAM tape storage: record tapes in DRAM, FIFOs, memrefs
  that the tape lowering marked (`tapeflow.tape` / `tapeflow.tape_meta` on the alloc;
  a growable tape's old buffer counts until its dealloc), plus the peak size of un-lowered
  `tape.cache`s as Enzyme-style arrays. `tape_spm_bytes` is the peak of scratchpad tile
  buffers.
- `ops.ideal_tape` (only when the program has them): the loads and stores of a free tape
  (tagged `tapeflow.ideal_tape`, the `ideal-tape` design), counted apart from
  `ops.loads`/`ops.stores`: they make no memory access, so no level counts them.
- `snapshot_bytes`: the peak of live checkpoint snapshots in DRAM (the `memref.alloc`s
  `tapeflow-checkpoint` marks `tapeflow.snapshot`: s + 1 slots of a time loop's state);
  0 without checkpointing. Their loads and stores are ordinary traffic. The gradient's
  DRAM footprint beyond the program's own arrays is `tape_bytes + snapshot_bytes`.
"""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

from tapeflow.hwmodel.config import OP_CLASSES, Machine
from tapeflow.hwmodel.timing import FORMULAS, rule_for
from xdsl.utils.exceptions import InterpretationError


class ModelState(Protocol):
    """What a report reads of a finished `tapeflow.hwmodel.listener.HardwareModel` (a protocol,
    so that the model, which builds its report in `simulate`, and the report do not import
    each other)."""

    machine: Machine
    cache: Any
    counts: Any
    _phases: int

    @property
    def tape_cache_bytes(self) -> int: ...

    def finish(self) -> dict[str, float]: ...


def build_report(model: ModelState, results: Any = ()) -> dict[str, Any]:
    m = model.machine
    terms = model.finish()
    k = model.cache.counters
    c = model.counts
    line = m.l1.line
    words_per_line = line / 8
    ops = m.ops

    # ---- op counts and compute energy
    op_counts = {name: n for name, n in zip(OP_CLASSES, c.ops) if n}
    instructions = sum(n for name, n in op_counts.items() if name != "free")
    compute_pj = sum(n * ops[name].energy_pj for name, n in op_counts.items())
    compute_pj += instructions * (
        m.get("core", "instruction_overhead_pj") + m.get("core", "register_file_pj")
    )

    # ---- traffic per level
    dma_bytes = c.dma_bytes_to_dram + c.dma_bytes_to_spm
    l2_lines = k["l1_fills"] + k["l2_fills"] + k["l2_writebacks_in"] + k["l2_writebacks"]
    l2_words = l2_lines * words_per_line
    l2_bytes = l2_lines * line
    if m.has_l1:
        l1_words = k["l1_accesses"] + (k["l1_fills"] + k["l1_writebacks"]) * words_per_line
        l1_bytes = c.cache_bytes + (k["l1_fills"] + k["l1_writebacks"]) * line
    else:  # no L1: the core's accesses are L2 word accesses
        l1_words = l1_bytes = 0
        l2_words += k["l1_accesses"]
        l2_bytes += c.cache_bytes
    if m.get("dma", "path") == "l2":  # DMA through the L2: it reads/writes every byte
        l2_words += dma_bytes / 8
        l2_bytes += dma_bytes
    spm_words = c.spm_loads + c.spm_stores + dma_bytes / 8
    spm_bytes = c.spm_bytes + dma_bytes
    dram_read = k["dram_lines_read"] * line + c.dma_bytes_to_spm
    dram_written = k["dram_lines_written"] * line + c.dma_bytes_to_dram

    e_l1 = m.l1.access_energy_pj
    e_l2 = m.l2.access_energy_pj
    e_spm = m.spm_access_energy_pj
    e_dram = m.get("dram", "energy_pj_per_byte")
    energy = {
        "compute": compute_pj,
        "L1": l1_words * e_l1,
        "L2": l2_words * e_l2,
        "SPM": spm_words * e_spm,
        "DMA": c.dma_transfers * m.get("dma", "engine_energy_pj"),
        "DRAM": (dram_read + dram_written) * e_dram,
    }
    # mW * ns = pJ, over the design's own SRAM (`sram.on_chip_bytes`: a design that never
    # uses the scratchpad does not pay for one)
    cache_capacity = m.l1.size + m.l2.size
    on_chip_bytes = cache_capacity + (m.spm_size if c.spm_high_water else 0)
    sram_kib = on_chip_bytes / 1024
    time_ns = terms["cycles"] / m.get("core", "clock_ghz")
    energy["leakage"] = m.get("leakage", "sram_mw_per_kib") * sram_kib * time_ns
    on_chip = (energy["compute"] + energy["L1"] + energy["L2"] + energy["SPM"] + energy["DMA"]
               + energy["leakage"])  # fmt: skip
    energy_summary = {
        "components_pj": energy,
        "on_chip_pj": on_chip,
        "on_chip_memory_pj": energy["L1"] + energy["L2"] + energy["SPM"],
        "off_chip_pj": energy["DRAM"],
        "total_pj": on_chip + energy["DRAM"],
    }

    sram = {
        "cache_capacity_bytes": cache_capacity,
        "spm_capacity_bytes": m.spm_size,
        "spm_high_water_bytes": c.spm_high_water,
        "on_chip_bytes": on_chip_bytes,
        "in_use_bytes": c.spm_high_water if c.spm_high_water else cache_capacity,
        "in_use_is": "spm_high_water" if c.spm_high_water else "cache_capacity",
    }

    report: dict[str, Any] = {
        "machine": m.raw.get("meta", {}).get("name", "?"),
        "cycles": terms["cycles"],
        "time_ns": terms["cycles"] / m.get("core", "clock_ghz"),
        "cycle_terms": terms,
        "overlap": m.get("core", "overlap"),
        "lockstep": m.get("core", "lockstep"),
        "phases": model._phases,
        "ops": {
            "by_class": op_counts,
            "instructions": instructions,
            "loads": c.loads,
            "stores": c.stores,
            "unclassified": dict(c.unclassified),
        },
        "levels": {
            "L1": {
                "accesses": k["l1_accesses"] if m.has_l1 else 0,
                "hits": k["l1_hits"],
                "misses": k["l1_misses"],
                "writebacks": k["l1_writebacks"],
                "prefetches": k["l1_prefetches"],
                "prefetches_useful": k["l1_prefetches_useful"],
                "bytes": l1_bytes,
                "word_accesses": l1_words,
            },
            "L2": {
                "accesses": k["l2_accesses"],
                "hits": k["l2_hits"],
                "misses": k["l2_misses"],
                "writebacks": k["l2_writebacks"],
                "prefetches": k["l2_prefetches"],
                "prefetches_useful": k["l2_prefetches_useful"],
                "bytes": l2_bytes,
                "word_accesses": l2_words,
            },
            "SPM": {
                "accesses": c.spm_loads + c.spm_stores,
                "loads": c.spm_loads,
                "stores": c.spm_stores,
                "bytes": spm_bytes,
                "word_accesses": spm_words,
            },
        },
        "dram": {
            "bytes_read": dram_read,
            "bytes_written": dram_written,
            "lines_read": k["dram_lines_read"],
            "lines_written": k["dram_lines_written"],
            "demand_lines_read": k["dram_demand_lines_read"],
        },
        "dma": {
            "transfers": c.dma_transfers,
            "bytes": dma_bytes,
            "bytes_to_dram": c.dma_bytes_to_dram,
            "bytes_to_spm": c.dma_bytes_to_spm,
            "stalls": c.dma_stalls,
            "stall_cycles": c.dma_stall,
            "bandwidth_bytes_per_cycle": m.dma_bandwidth,
            "bandwidth_bound_by": m.dma_bound,
        },
        "energy": energy_summary,
        "sram": sram,
        "tape_bytes": c.tape_bytes + model.tape_cache_bytes,
        "tape_spm_bytes": c.tape_spm_bytes,
        "snapshot_bytes": c.snapshot_bytes,
        "energy_table_pj": {
            "ops": {name: ops[name].energy_pj for name in OP_CLASSES},
            "L1_per_64bit": e_l1,
            "L2_per_64bit": e_l2,
            "SPM_per_64bit": e_spm,
            "DRAM_per_byte": e_dram,
        },
        "results": list(results),
    }
    if c.ideal_loads or c.ideal_stores:  # a free tape (`tapeflow.ideal_tape`) ran
        report["ops"]["ideal_tape"] = {"loads": c.ideal_loads, "stores": c.ideal_stores}
    _check_counters(report)
    return report


def _check_counters(report: dict[str, Any]) -> None:
    """Every count and energy must be finite and >= 0 (the Timeloop lesson)."""

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, v in value.items():
                if key in ("results", "unclassified"):
                    continue
                walk(v, f"{path}.{key}" if path else key)
        elif isinstance(value, bool | str) or value is None:
            return
        elif isinstance(value, int | float):
            if not math.isfinite(value) or value < 0:
                raise InterpretationError(f"hardware model: counter {path} = {value}")

    walk(report, "")


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=False)


def _fmt(x: float) -> str:
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.1f}"


def format_table(report: dict[str, Any]) -> str:
    """A human-readable table of the report."""
    out: list[str] = []
    t = report["cycle_terms"]
    out.append(f"machine: {report['machine']}   (path: {report.get('path', 'interp')})")
    out.append(f"cycles: {_fmt(report['cycles'])}  ({_fmt(report['time_ns'])} ns)")
    out.append(
        f"  T_core = sum over {report['phases']} phase(s) of "
        + FORMULAS[rule_for(bool(report.get("lockstep")), report.get("overlap"),
                            "T_datapath" in t)]  # fmt: skip
        + "; cycles = T_core + T_dma_stall + T_drain"
    )
    extra = ("T_datapath",) if "T_datapath" in t else ()
    for name in ("T_OL", "T_nOL", "T_L2", "T_DRAM", "T_exposed", "T_late", "T_hit", *extra,
                 "T_core", "T_dma_stall", "T_drain"):  # fmt: skip
        out.append(f"  {name:<12}{_fmt(t[name]):>16}")
    ops = report["ops"]
    out.append(f"ops: {_fmt(ops['instructions'])} instructions, {_fmt(ops['loads'])} loads, "
               f"{_fmt(ops['stores'])} stores")  # fmt: skip
    out.append("  " + ", ".join(f"{k}={_fmt(v)}" for k, v in ops["by_class"].items()))
    if "ideal_tape" in ops:
        out.append(f"  free tape (ideal): {_fmt(ops['ideal_tape']['loads'])} loads, "
                   f"{_fmt(ops['ideal_tape']['stores'])} stores, no memory access")  # fmt: skip
    if ops["unclassified"]:
        out.append("  unclassified (charged as int): " + ", ".join(ops["unclassified"]))
    out.append("")
    hdr = f"{'level':<6}{'accesses':>14}{'hits':>14}{'misses':>14}{'prefetch':>12}" \
          f"{'useful':>12}{'bytes':>16}"  # fmt: skip
    out.append(hdr)
    for name in ("L1", "L2"):
        lv = report["levels"][name]
        out.append(f"{name:<6}{_fmt(lv['accesses']):>14}{_fmt(lv['hits']):>14}"
                   f"{_fmt(lv['misses']):>14}{_fmt(lv['prefetches']):>12}"
                   f"{_fmt(lv['prefetches_useful']):>12}{_fmt(lv['bytes']):>16}")  # fmt: skip
    spm = report["levels"]["SPM"]
    out.append(f"{'SPM':<6}{_fmt(spm['accesses']):>14}{'':>14}{'':>14}{'':>12}{'':>12}"
               f"{_fmt(spm['bytes']):>16}")  # fmt: skip
    d = report["dram"]
    out.append(f"DRAM: {_fmt(d['bytes_read'])} B read, {_fmt(d['bytes_written'])} B written "
               f"({_fmt(d['demand_lines_read'])} demand line misses)")  # fmt: skip
    dma = report["dma"]
    out.append(f"DMA: {_fmt(dma['transfers'])} transfers, {_fmt(dma['bytes'])} B "
               f"({_fmt(dma['bytes_to_dram'])} to DRAM, {_fmt(dma['bytes_to_spm'])} to SPM), "
               f"{_fmt(dma['stalls'])} stalls = {_fmt(dma['stall_cycles'])} cycles")  # fmt: skip
    out.append("")
    e = report["energy"]
    out.append("energy (pJ):")
    for name, v in e["components_pj"].items():
        out.append(f"  {name:<10}{_fmt(v):>20}")
    out.append(f"  {'on-chip':<10}{_fmt(e['on_chip_pj']):>20}   (compute+L1+L2+SPM+DMA+leak; "
               f"memory only {_fmt(e['on_chip_memory_pj'])})")  # fmt: skip
    out.append(f"  {'off-chip':<10}{_fmt(e['off_chip_pj']):>20}   (DRAM)")
    out.append(f"  {'total':<10}{_fmt(e['total_pj']):>20}")
    s = report["sram"]
    out.append(f"SRAM on chip: {_fmt(s['on_chip_bytes'])} B (L1 + L2"
               + (" + scratchpad)" if s["spm_high_water_bytes"] else ")"))
    out.append(f"SRAM in use: {_fmt(s['in_use_bytes'])} B ({s['in_use_is']}; caches "
               f"{_fmt(s['cache_capacity_bytes'])} B, scratchpad high-water "
               f"{_fmt(s['spm_high_water_bytes'])} B of "
               f"{_fmt(s['spm_capacity_bytes'])} B)")  # fmt: skip
    out.append(f"tape bytes: {_fmt(report['tape_bytes'])} in DRAM, "
               f"{_fmt(report['tape_spm_bytes'])} in scratchpad tiles")  # fmt: skip
    if report.get("snapshot_bytes"):
        out.append(f"snapshot bytes: {_fmt(report['snapshot_bytes'])} in DRAM (checkpoints)")
    for r in report["results"]:
        if isinstance(r, dict) and "type" in r:
            out.append(f"result[{r['index']}]: {r['type']} = {json.dumps(r['value'])}")
        else:
            out.append(f"result: {json.dumps(r)}")
    return "\n".join(out)
