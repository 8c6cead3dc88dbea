"""SRAM leakage per KiB at 45 nm from CACTI 7, for the capacities the presets use.

Offline generator behind `leakage.sram_mw_per_kib` (hwmodel/defaults.toml); not a test or
CI dependency. It runs the CACTI 7 that the `hwcomponents-cacti` package ships (sources
and binary; tested with 1.0.40, CACTI "7.0 3DD Prerelease"; on Python 3.11 it installs
with pip's --ignore-requires-python, the C++ part does not care), with that package's own
`default_cfg.cfg` and the lines its `_call_cacti` appends (size, one read/write port,
block and bus width, technology, one UCA bank, cache type "ram", no tag): the same CACTI
run as `hwcomponents_cacti.SRAM(tech_node=45e-9, width=64, size=...)`, called directly
because that wrapper's Python needs 3.12. `--cell` sets the data and tag arrays' cell
and peripheral type (the package's default is "itrs-lstp", low standby power; CACTI also
has "itrs-hp" and "itrs-lop"). That config weights leakage alone in CACTI's design
objective (0:0:1000000:0:0), so each figure is the least-leakage organisation CACTI finds.
Leakage = CACTI's "Standby leakage per bank(mW)".

    python benchmarks/cacti_leakage.py --cacti-dir DIR [--cell itrs-hp,...] [--kib 1,16,...]
        > benchmarks/cacti_leakage_45nm.csv

DIR is the installed package's folder (`.../site-packages/hwcomponents_cacti`); if its
prebuilt `cacti/cacti` does not run (it needs a newer glibc than some hosts have), copy
the folder and run `make` in its `cacti/` (about a minute). The stored output is
benchmarks/cacti_leakage_45nm.csv; hwmodel/defaults.toml and accel-salam.toml cite it.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

KIB = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
"""The presets' SRAM capacities and the CSV's cluster-cache sweep (1 KiB .. 2 MiB)."""
WORD_BYTES = 8  # one f64 per access, as the hardware model's accesses


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("hwcomponents_cacti")  # locates without importing
    return Path(spec.origin).parent if spec and spec.origin else None


def config(pkg: Path, size_bytes: int, cell: str) -> str:
    """The package's default config plus `_call_cacti`'s lines, for one SRAM."""
    cfg = (pkg / "default_cfg.cfg").read_text()
    if cell != "itrs-lstp":
        cfg = cfg.replace('"itrs-lstp"', f'"{cell}"').replace('"itrs-lstp\n', f'"{cell}"\n')
    return cfg + "".join([
        "\n############## User-Specified Hardware Attributes ##############\n",
        f"-size (bytes) {size_bytes}\n",
        "-read-write port  1\n",
        f"-block size (bytes) {WORD_BYTES}\n",
        "-technology (u) 0.045\n",
        f"-output/input bus width  {WORD_BYTES * 8}\n",
        "-UCA bank 1\n",
        '-cache type "ram"\n',
        "-tag size (b) 0\n",
        "-associativity 1\n",
    ])  # fmt: skip


def leakage_mw(pkg: Path, size_bytes: int, cell: str) -> dict[str, float]:
    """One CACTI run: standby leakage (mW), area (mm2), access time (ns)."""
    with tempfile.TemporaryDirectory() as tmp:
        infile = Path(tmp) / "sram.cfg"
        infile.write_text(config(pkg, size_bytes, cell))
        run = subprocess.run(["./cacti", "-infile", str(infile)], cwd=pkg / "cacti",
                             capture_output=True, text=True)  # fmt: skip
        out = Path(str(infile) + ".out")
        if run.returncode != 0 or not out.exists():
            raise RuntimeError(f"CACTI failed on {size_bytes} B: {run.stdout[-400:]}")
        row = list(csv.DictReader(out.read_text().splitlines()))[-1]
    return {"leak_mw": float(row[" Standby leakage per bank(mW)"]),
            "area_mm2": float(row[" Area (mm2)"]),
            "access_ns": float(row[" Access time (ns)"])}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cacti-dir", default="", help="the hwcomponents_cacti package folder")
    p.add_argument("--cell", default="itrs-hp,itrs-lstp,itrs-lop",
                   help="comma-separated CACTI cell types (itrs-hp, itrs-lstp, itrs-lop)")
    p.add_argument("--kib", default=",".join(map(str, KIB)))
    ns = p.parse_args(argv)
    pkg = Path(ns.cacti_dir) if ns.cacti_dir else _package_dir()
    if pkg is None or not (pkg / "cacti" / "cacti").exists():
        print("error: CACTI not found: pip install hwcomponents-cacti, or pass --cacti-dir",
              file=sys.stderr)  # fmt: skip
        return 1
    cells = [c for c in ns.cell.split(",") if c]
    bad = [c for c in cells if c not in ("itrs-hp", "itrs-lstp", "itrs-lop")]
    if bad:
        print(f"error: unknown cell type(s) {', '.join(bad)}", file=sys.stderr)
        return 1
    print("# benchmarks/cacti_leakage.py: CACTI 7.0 (hwcomponents-cacti 1.0.40 sources and "
          "default_cfg.cfg),")
    print(f"# 45 nm, SRAM (cache type ram), {WORD_BYTES}-byte port, 1 rw port, 1 UCA bank, 300 K")
    print("cell,kib,leak_mw,mw_per_kib,area_mm2,access_ns")
    for cell in cells:
        for kib in (int(x) for x in ns.kib.split(",") if x):
            r = leakage_mw(pkg, kib * 1024, cell)
            print(f"{cell},{kib},{r['leak_mw']:.4g},{r['leak_mw'] / kib:.4g},"
                  f"{r['area_mm2']:.4g},{r['access_ns']:.4g}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
