"""A sweep's rows on disk (Parquet part files merged into `RESULTS`) and what is read
off them: the iso-SRAM speedup, the per-kernel summary and Pareto fronts."""

from __future__ import annotations

import json
import math
import os
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tapeflow.eval.summary import ratio
from tapeflow.eval.sweep.spec import PASS_OPTIONS

RESULTS = "results.parquet"


# ------------------------------------------------------------------------------------------
# Results on disk


def atomic_write(path: Path, data: bytes | str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(data, str):
        tmp.write_text(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def part_files(out_dir: Path) -> list[Path]:
    return sorted((out_dir / "parts").glob("part-*.parquet"))


def read_results(out_dir: str | Path) -> Any:
    """Every row of `OUT/results.parquet` and of the part files not merged yet, one per
    (point, variant): the latest wins. A `pyarrow.Table` (None when there is none)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out_dir = Path(out_dir)
    files = [out_dir / RESULTS] if (out_dir / RESULTS).is_file() else []
    tables = [pq.read_table(f) for f in files + part_files(out_dir)]
    if not tables:
        return None
    table = pa.concat_tables(tables, promote_options="permissive")
    keys = list(zip(table.column("point_id").to_pylist(), table.column("variant").to_pylist(),
                    strict=True))  # fmt: skip
    last = {k: i for i, k in enumerate(keys)}
    keep = sorted(last.values())
    return table.take(keep) if len(keep) != len(keys) else table


def write_part(out_dir: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        return
    (out_dir / "parts").mkdir(parents=True, exist_ok=True)
    path = out_dir / "parts" / f"part-{time.time_ns():020d}-{os.getpid()}.parquet"
    tmp = path.with_name("." + path.name + ".tmp")
    columns = list(dict.fromkeys(k for row in rows for k in row))  # reports differ in keys
    pq.write_table(pa.Table.from_pylist([{k: row.get(k) for k in columns} for row in rows]),
                   tmp)  # fmt: skip
    os.replace(tmp, path)


def merge_parts(out_dir: Path) -> Any:
    """Folds the part files into `results.parquet` (atomically), then removes them."""
    import pyarrow.parquet as pq

    parts = part_files(out_dir)
    table = read_results(out_dir)
    if table is None:
        return None
    order = sorted(range(table.num_rows), key=lambda i: (
        table.column("kernel")[i].as_py(), table.column("point_id")[i].as_py(),
        table.column("variant")[i].as_py()))  # fmt: skip
    table = with_iso_sram(table.take(order))
    tmp = out_dir / f".{RESULTS}.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, out_dir / RESULTS)
    for p in parts:
        p.unlink(missing_ok=True)
    return table


def grid_axes(columns: Sequence[str]) -> list[str]:
    """The axis columns of a results table: kernel, size, machine, seed, machine keys
    (`l2.size`...) and pass options."""
    return [c for c in columns if c in ("kernel", "size", "machine", "seed")
            or c in PASS_OPTIONS or (not c.startswith("report.") and "." in c)]  # fmt: skip


def with_iso_sram(table: Any) -> Any:
    """`table` with `speedup_iso_sram` on TapeFlow rows: the Enzyme layout's cycles at the
    smallest on-chip SRAM (`sram_bytes`, whole chip) >= TapeFlow's, among the Enzyme rows
    that differ from it only in `l2.size` and the pass options, over TapeFlow's cycles
    (None when no such row: sweep `l2.size` to get it)."""
    import pyarrow as pa

    rows = table.to_pylist()
    if not rows or "sram_bytes" not in table.column_names:
        return table
    fixed = [a for a in grid_axes(table.column_names) if a != "l2.size" and a not in PASS_OPTIONS]
    enzyme: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if r["variant"] == "enzyme" and not r.get("error") and r.get("sram_bytes") is not None:
            key = json.dumps([r.get(a) for a in fixed])
            enzyme[key].append((r["sram_bytes"], r["report.cycles"]))
    values: list[float | None] = []
    for r in rows:
        more = [] if r["variant"] != "tapeflow" or r.get("error") or r.get("sram_bytes") is None \
            else [p for p in enzyme[json.dumps([r.get(a) for a in fixed])]
                  if p[0] >= r["sram_bytes"]]  # fmt: skip
        values.append(ratio(min(more)[1], r["report.cycles"]) if more else None)
    if "speedup_iso_sram" in table.column_names:
        table = table.drop_columns(["speedup_iso_sram"])
    return table.append_column("speedup_iso_sram", pa.array(values, pa.float64()))


# ------------------------------------------------------------------------------------------
# What a run did, per kernel


@dataclass
class SweepStats:
    """What a run did; simulations count distinct (IR, machine, inputs) keys."""

    points: int = 0
    points_skipped: int = 0
    compiles_run: int = 0
    compiles_cached: int = 0
    simulations_run: int = 0
    simulations_cached: int = 0
    tasks: int = 0
    rows: int = 0
    errors: int = 0
    wall_s: float = 0.0


def summary(table: Any, stats: SweepStats, workers: int | str) -> dict[str, Any]:
    """What a run did and, per kernel, TapeFlow's speedup range over the grid and the
    Pareto front of (on-chip SRAM, cycles) of both designs, and with checkpointing, each
    checkpoint row's cycles and DRAM footprint beside its point's TapeFlow and Enzyme
    layout: the figures docs quote (the README's sweep examples: docs/sweep-example.json,
    docs/sweep-checkpoint.json, checked by test_bench_readme.py)."""
    rows = [r for r in table.to_pylist() if not r.get("error")]
    out: dict[str, Any] = {
        "points": stats.points, "rows": stats.rows, "errors": stats.errors,
        "compiles_run": stats.compiles_run, "simulations_run": stats.simulations_run,
        "tasks": stats.tasks, "wall_s": stats.wall_s, "workers": workers,
        "grads_identical": all(r.get("grads_identical") is not False for r in rows),
        "kernels": {},
    }  # fmt: skip
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        mine = [r for r in rows if r["kernel"] == kernel and r["variant"] in ("enzyme",
                                                                               "tapeflow")]
        speed = [r["speedup"] for r in mine if r["variant"] == "tapeflow" and r.get("speedup")]
        front = pareto_front([(float(r["sram_bytes"]), float(r["report.cycles"])) for r in mine])
        out["kernels"][kernel] = {
            "speedup_min": min(speed, default=None), "speedup_max": max(speed, default=None),
            "front": [{"variant": mine[i]["variant"], "sram_bytes": mine[i]["sram_bytes"],
                       "cycles": mine[i]["report.cycles"], "speedup": mine[i].get("speedup"),
                       **{a: mine[i].get(a) for a in grid_axes(table.column_names)
                          if a != "kernel"}} for i in front],
        }  # fmt: skip
        ckpt = [r for r in rows if r["kernel"] == kernel and r["variant"] == "checkpoint"]
        others = [a for a in grid_axes(table.column_names) if a not in ("kernel", "snapshots")]
        ckpt.sort(key=lambda r: (json.dumps([r.get(a) for a in others]), r["snapshots"]))
        if ckpt:
            by_point = {(r["point_id"], r["variant"]): r for r in rows}

            def other(r: dict[str, Any], variant: str, key: str) -> Any:
                return by_point.get((r["point_id"], variant), {}).get(key)

            out["kernels"][kernel]["checkpoint"] = [{
                **{a: r.get(a) for a in grid_axes(table.column_names) if a != "kernel"},
                "cycles": r["report.cycles"], "tape_bytes": r["report.tape_bytes"],
                "snapshot_bytes": r["report.snapshot_bytes"],
                "dram_footprint_bytes": r["dram_footprint_bytes"],
                "cycles_vs_tapeflow": r.get("cycles_vs_tapeflow"),
                "footprint_reduction": r.get("footprint_reduction"),
                "speedup": r.get("speedup"),
                "tapeflow_cycles": other(r, "tapeflow", "report.cycles"),
                "tapeflow_footprint_bytes": other(r, "tapeflow", "dram_footprint_bytes"),
                "enzyme_cycles": other(r, "enzyme", "report.cycles"),
                "enzyme_footprint_bytes": other(r, "enzyme", "dram_footprint_bytes"),
            } for r in ckpt]  # fmt: skip
    return out


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both coordinates (lower is better),
    sorted by the first coordinate."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    front: list[int] = []
    best = math.inf
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front
