"""README's quoted figures agree with the JSON of the run they come from (issue 22 item 14):
the results table with the bench's JSON it names, the sweep example's paragraph with
docs/sweep-example.json. A figure that drifts from its source fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def test_results_table_matches_its_json() -> None:
    text = _section("Results beside the paper")
    m = re.search(r"\((docs/results-[\w.-]+\.json)\)", text)
    assert m, "the results section names the JSON of its run"
    data = json.loads((ROOT / m.group(1)).read_text())
    machines = {d["header"]["machine_name"]: d for d in data["machines"]}
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    header = [c.strip(" `") for c in lines[0].strip("|").split("|")]
    columns = {i: name.split()[0].strip("`") for i, name in enumerate(header)
               if name.split()[0].strip("`") in machines}  # fmt: skip
    assert len(columns) == len(machines), header

    def sources(row: str, d: dict) -> list[float]:
        gm = d["geomean"]
        cached = [k for k in d["kernels"] if not k["control"]]
        speed = sorted(k["speedup"]["tapeflow"] for k in cached)
        return {
            "speedup over Enzyme": [gm["speedup_tapeflow"], speed[0], speed[-1]],
            "on-chip SRAM": [gm["sram_ratio"], gm["sram_iso_ratio"]],
            "on-chip energy": [gm["on_chip_energy_ratio"], gm["on_chip_memory_energy_ratio"],
                               gm["total_energy_ratio"]],
        }[row]  # a row with no source here fails: say where its figures come from

    checked = 0
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for i, name in columns.items():
            quoted = re.findall(X, cells[i])
            want = sources(cells[0], machines[name])
            assert len(quoted) == len(want), (cells[0], name, cells[i])
            for q, v in zip(quoted, want, strict=True):
                assert _same(q, v), f"README {cells[0]!r} on {name}: {q}x, its JSON {v:.4f}"
                checked += 1
    assert checked >= 10


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
