"""README's quoted figures agree with the JSON of the run they come from (issue 22 item 14):
the results table with the bench's JSON it names, the sweep example's paragraph with
docs/sweep-example.json. A figure that drifts from its source fails here."""

from __future__ import annotations

import json
import math
import re

import pytest
from helpers.paths import ROOT

README = (ROOT / "README.md").read_text()
X = r"(\d+(?:\.\d+)?)x"


def _section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 3)
    return README[start:] if end < 0 else README[start:end]


def _find(pattern: str, text: str) -> re.Match[str] | None:
    """`re.search` with every space of `pattern` matching any run of white space (the
    README's lines wrap anywhere)."""
    return re.search(pattern.replace(" ", r"\s+"), text)


def _same(quoted: str, value: float) -> bool:
    """`quoted` is `value` rounded to the digits it shows."""
    digits = len(quoted.split(".")[1]) if "." in quoted else 0
    return f"{value:.{digits}f}" == quoted


def _entries(data: dict) -> dict[tuple[str, str], dict]:
    """The bench JSON's entries by (machine, suite): one per machine and suite."""
    return {(d["header"]["machine_name"], d["header"].get("suite", "bundled")): d
            for d in data["machines"]}  # fmt: skip


def _worst(entry: dict) -> tuple[float, list[str], int]:
    """Issue 20's figure: the largest TapeFlow / Enzyme-layout cycles over the kernels that
    keep a tape (controls run one program three ways: 1 by construction), the kernels at
    it, and how many kernels there are."""
    ratios = {k["kernel"]: k["variants"]["tapeflow"]["cycles"] / k["variants"]["enzyme"]["cycles"]
              for k in entry["kernels"] if not k["control"]}  # fmt: skip
    worst = max(ratios.values())
    return worst, [k for k, r in ratios.items() if r == worst], len(ratios)


def _salam(entry: dict) -> list[float]:
    """Suite salam's summary: our and gem5-SALAM's geomean speedups over the kernels
    that have both (the bench's own `salam_comparison`)."""
    both = [c for c in entry["salam_comparison"]
            if c["speedup_ours"] and c["speedup_gem5_salam"]]  # fmt: skip
    return [math.exp(sum(math.log(c[k]) for c in both) / len(both))
            for k in ("speedup_ours", "speedup_gem5_salam")]  # fmt: skip


def _native() -> dict[str, float]:
    """docs/RESULTS.md's native CPU table (kernel -> Enzyme / TapeFlow CPU time, min of
    the runs, and its `geomean` row as benchmarks/native_time.py printed it): measured
    outside the bench, so README's native figures are checked against that table."""
    text = (ROOT / "docs" / "RESULTS.md").read_text()
    start = text.index("## Native CPU time")
    end = min(i for i in (text.find("\n## ", start + 3), text.find("\n### ", start))
              if i >= 0)  # the first table: its later subsections are history
    rows = re.findall(r"^\| \**(\w+)\** \| \**(\d+\.\d+)x?\**", text[start:end], re.M)
    return {k: float(v) for k, v in rows}


def _ranged(cell: str, gm: float | None, per_kernel: dict[str, float]) -> list[float]:
    """A cell "G (a k1 .. b k2)": G is the geomean; each "a k" names a kernel whose figure
    rounds to a; they are the lowest and the highest."""
    m = _find(rf"{X} \({X} (\w+) \.\. {X} (\w+)\)", cell.replace("*", ""))
    assert m, cell
    per_kernel = {k: v for k, v in per_kernel.items() if v is not None}
    lo, hi = min(per_kernel.values()), max(per_kernel.values())
    for q, k, want in ((m.group(2), m.group(3), lo), (m.group(4), m.group(5), hi)):
        assert k in per_kernel and _same(q, per_kernel[k]) and _same(q, want), (cell, k)
    return [gm, lo, hi]


def test_results_table_matches_its_json() -> None:
    text = _section("Results beside the paper")
    m = re.search(r"\((docs/results-[\w.-]+\.json)\)", text)
    assert m, "the results section names the JSON of its run"
    data = json.loads((ROOT / m.group(1)).read_text())
    assert _find(f"commit {data['header']['commit']}", text), "the section names the run's commit"
    entries = _entries(data)
    machines = {name for name, _ in entries}
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header = [c.strip(" `") for c in lines[0].strip("|").split("|")]
    columns = {i: name.split()[0].strip("`") for i, name in enumerate(header)
               if name.split()[0].strip("`") in machines}  # fmt: skip
    assert len(columns) == len(machines), header
    native = _native()

    def sources(row: str, name: str, cell: str) -> list[float]:
        d = entries[(name, "bundled")]
        gm = d["geomean"]
        cached = [k for k in d["kernels"] if not k["control"]]

        def speed(key: str) -> dict[str, float]:
            return {k["kernel"]: k["speedup"][key] for k in cached}

        if row == "speedup over Enzyme":
            return _ranged(cell, gm["speedup_tapeflow"], speed("tapeflow"))
        if row == "iso-SRAM speedup":
            return _ranged(cell, gm["speedup_tapeflow_iso_sram"], speed("tapeflow_iso_sram"))
        if row == "on-chip SRAM, whole chip":
            return [v for v in (gm["sram_ratio"], gm["sram_iso_ratio"]) if v is not None]
        if row == "on-chip energy, leakage included":
            return [gm["on_chip_energy_ratio"], gm["on_chip_memory_energy_ratio"],
                    gm["total_energy_ratio"]]  # fmt: skip
        if row == "worst TapeFlow / Enzyme cycles":
            ratio, at, n = _worst(d)
            named = "every kernel" in cell if len(at) == n else any(k in cell for k in at)
            assert named, (cell, at)
            return [ratio]
        if row == "gem5-SALAM's AD suite, 16 KiB cluster cache":
            return _salam(entries[(name, "salam")]) if re.search(X, cell) else []
        if row == "native CPU time, Enzyme / TapeFlow":
            if not re.search(X, cell):
                return []
            per = {k: v for k, v in native.items() if k != "geomean"}
            return _ranged(cell, native["geomean"], per)
        raise AssertionError(f"README row {row!r} has no source here: say where it comes from")

    checked = 0
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for i, name in columns.items():
            quoted = re.findall(X, cells[i])
            want = sources(cells[0], name, cells[i])
            assert len(quoted) == len(want), (cells[0], name, cells[i])
            for q, v in zip(quoted, want, strict=True):
                assert _same(q, v), f"README {cells[0]!r} on {name}: {q}x, its JSON {v:.4f}"
                checked += 1
    assert checked >= 20


def _sweep_paragraph(start: str, summary: str) -> tuple[str, dict]:
    """The README's paragraph from `start` to its figure, and the sweep summary it quotes,
    whose run counts it must state: `N points, M rows) ran in S s with `--workers W``."""
    text = _section("Using it")
    begin = text.index(start)
    para = text[begin : text.index("![", begin)]
    data = json.loads((ROOT / "docs" / summary).read_text())
    m = _find(r"(\d+) points, (\d+) rows\) ran in (\d+) s with `--workers (\d+)`", para)
    assert m, para
    assert [int(g) for g in m.groups()] == [data["points"], data["rows"],
                                            round(data["wall_s"]), data["workers"]]  # fmt: skip
    return para, data


def test_sweep_example_matches_its_json() -> None:
    para, data = _sweep_paragraph("The example above", "sweep-example.json")
    m = _find(r"(\d+) IR compiled, (\d+) \(IR, machine\) simulations in (\d+) tasks", para)
    assert m, para
    assert [int(g) for g in m.groups()] == [data["compiles_run"], data["simulations_run"],
                                            data["tasks"]]  # fmt: skip
    for kernel, k in data["kernels"].items():
        m = _find(rf"{kernel}: TapeFlow {X}-{X} over the grid", para)
        assert m, (kernel, para)
        assert _same(m.group(1), k["speedup_min"]) and _same(m.group(2), k["speedup_max"])
        m = _find(rf"{kernel}'s Pareto front: (\d+) points?, (\d+) TapeFlow", para)
        assert m, (kernel, para)
        front = k["front"]
        assert int(m.group(1)) == len(front)
        assert int(m.group(2)) == sum(1 for p in front if p["variant"] == "tapeflow")
        num = X.replace("x", "")
        m = _find(rf"{kernel} at {num}e(\d+)-{num}e(\d+) cycles", para)
        assert m, (kernel, para)
        lo, hi = float(f"{m.group(1)}e{m.group(2)}"), float(f"{m.group(3)}e{m.group(4)}")
        cycles = [p["cycles"] for p in front]
        assert lo == pytest.approx(min(cycles), rel=0.01)
        assert hi == pytest.approx(max(cycles), rel=0.01)


def test_checkpoint_sweep_matches_its_json() -> None:
    """The checkpointing paragraph's figures: docs/sweep-checkpoint.json's (issue 21)."""
    para, data = _sweep_paragraph("The checkpoint sweep", "sweep-checkpoint.json")
    assert data["grads_identical"] is True
    assert data["errors"] == 0
    rows = data["kernels"]["mass_spring"]["checkpoint"]
    assert {r["machine"] for r in rows} == {"default-45nm"}
    quoted = re.findall(r"s\s+=\s+(\d+):\s+" + X + r"\s+smaller\s+at\s+" + X, para)
    assert [int(q[0]) for q in quoted] == [r["snapshots"] for r in rows]
    for (_, reduction, cycles), r in zip(quoted, rows, strict=True):
        assert _same(reduction, r["footprint_reduction"]), (reduction, r)
        assert _same(cycles, r["cycles_vs_tapeflow"]), (cycles, r)
    mib = _find(r"TapeFlow keep (\d+\.\d+) MiB of tape", para)
    assert mib, para
    for r in rows:
        for key in ("tapeflow_footprint_bytes", "enzyme_footprint_bytes"):
            assert _same(mib.group(1), r[key] / 2**20)
    kib = _find(r"one segment's \((\d+) KiB\)", para)
    assert kib, para
    assert {r["tape_bytes"] for r in rows} == {int(kib.group(1)) * 1024}


def test_leakage_share_matches_its_json() -> None:
    """The results section's leakage share of on-chip energy ("N-M% of it on MACHINE"):
    the lowest and highest leakage / on-chip energy, over both variants of the bundled
    kernels that keep a tape, in the JSON the section names."""
    text = _section("Results beside the paper")
    m = re.search(r"\((docs/results-[\w.-]+\.json)\)", text)
    assert m
    entries = _entries(json.loads((ROOT / m.group(1)).read_text()))
    quoted = re.findall(r"(\d+)-(\d+)%\s+(?:of\s+it\s+)?on\s+`([\w-]+)`", text)
    assert {name for _, _, name in quoted} == {name for name, _ in entries}, quoted
    for lo, hi, name in quoted:
        shares = [v["energy_pj"]["leakage"] / v["on_chip_pj"]
                  for k in entries[(name, "bundled")]["kernels"] if not k["control"]
                  for v in (k["variants"]["enzyme"], k["variants"]["tapeflow"])]  # fmt: skip
        assert (int(lo), int(hi)) == (round(100 * min(shares)), round(100 * max(shares))), name
