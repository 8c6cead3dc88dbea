"""gem5-SALAM's AD benchmarks: their published results and our C kernels of them.

`gem5_salam_results.csv` holds the result CSVs of sfu-arch/gem5-SALAM (branch
new_tapeman, `8ILP_cache_results/`) as one table; its header comment cites the files and
commits, README.md documents every column. `load_results()` reads it, `salam_speedup()`
gives their orig/ad total-cycle ratio at one cluster-cache size.
"""

from __future__ import annotations

import csv
from pathlib import Path

SALAM_DIR = Path(__file__).resolve().parent
RESULTS_CSV = SALAM_DIR / "gem5_salam_results.csv"

_TEXT_COLUMNS = ("benchmark", "variant", "accounting", "label", "source_path", "source_commit")
_FLOAT_COLUMNS = ("fw_bw_mb", "rev_bw_mb", "total_bw_mb", "bin_zero_bw_mb")


def load_results(path: Path = RESULTS_CSV) -> list[dict[str, int | float | str]]:
    """Every row of the results table, counts as int, bandwidths (MB) as float."""
    with open(path, newline="") as f:
        reader = csv.DictReader(line for line in f if not line.startswith("#"))
        rows = []
        for row in reader:
            rows.append({
                k: v if k in _TEXT_COLUMNS else float(v) if k in _FLOAT_COLUMNS else int(v)
                for k, v in row.items()
            })
    return rows


def salam_cycles(benchmark: str, variant: str, cache_bytes: int,
                 accounting: str = "total", rows: list[dict] | None = None) -> dict[str, int]:
    """Their forward, reverse and total cycles of one run (KeyError if they have none)."""
    for r in rows if rows is not None else load_results():
        if (r["benchmark"], r["variant"], r["accounting"], r["cache_bytes"]) == (
                benchmark, variant, accounting, cache_bytes):
            return {k: r[k] for k in ("fw_cycles", "rev_cycles", "total_cycles")}
    raise KeyError((benchmark, variant, accounting, cache_bytes))


def salam_speedup(benchmark: str, cache_bytes: int, rows: list[dict] | None = None) -> float:
    """gem5-SALAM's own speedup: orig (Enzyme) over ad (TapeFlow) total cycles."""
    rows = rows if rows is not None else load_results()
    orig = salam_cycles(benchmark, "orig", cache_bytes, rows=rows)["total_cycles"]
    ad = salam_cycles(benchmark, "ad", cache_bytes, rows=rows)["total_cycles"]
    return orig / ad


def salam_cache_sizes(benchmark: str, rows: list[dict] | None = None) -> list[int]:
    """The cluster-cache sizes (bytes) at which both variants of `benchmark` were run."""
    rows = rows if rows is not None else load_results()
    have = {v: {r["cache_bytes"] for r in rows if r["benchmark"] == benchmark and r["variant"] == v}
            for v in ("orig", "ad")}
    return sorted(have["orig"] & have["ad"])
