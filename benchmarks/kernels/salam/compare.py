"""Our Enzyme-layout / TapeFlow cycle ratio beside gem5-SALAM's orig/ad, per suite kernel.

    python benchmarks/kernels/salam/compare.py [KERNEL ...] [--machine accel-salam]
                                                [--cache-bytes 16384] [--spm-bytes 32768]

A stopgap until `tapeflow-bench --suite salam`: each kernel at its real size, through the
tools a user runs (`tapeflow-cc`, `tapeflow-opt -p <variant>`, `tapeflow-sim --json`),
on the manifest's inputs (seed 0, zero shadows, seed 1.0), the machine's L2 set to the
cluster-cache size their CSV row is read at. Default kernels: the CSV's, without alexnet
(its real size runs 58 M dense iterations).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tapeflow.eval.jobs import pipeline_spec
from tapeflow.eval.suites import KERNELS, salam_speedup


def cycles(name: str, variant: str, machine: str, cache_bytes: int, spm_bytes: int,
           inputs: Path) -> float:
    k = KERNELS[name]
    mlir = subprocess.run(["tapeflow-cc", str(k.path)], capture_output=True, text=True,
                          check=True).stdout
    spec = pipeline_spec(variant, spm_bytes, 0, 2, mode="always")  # gem5-SALAM's AD streams
    opt = subprocess.run(["tapeflow-opt", "-", "-p", spec],
                         input=mlir, capture_output=True, text=True, check=True).stdout
    out = subprocess.run(["tapeflow-sim", "-", "--entry", k.grad_entry, "--machine", machine,
                          "--set", f"l2.size={cache_bytes}", "--inputs", str(inputs),
                          "--args", "1.0", "--json", "-q"],
                         input=opt, capture_output=True, text=True, check=True).stdout
    return float(json.loads(out[out.find("{"):])["cycles"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernels", nargs="*")
    p.add_argument("--machine", default="accel-salam")
    p.add_argument("--cache-bytes", type=int, default=16384)
    p.add_argument("--spm-bytes", type=int, default=32768)
    a = p.parse_args(argv)
    names = a.kernels or sorted(n for n, k in KERNELS.items() if k.csv and n != "alexnet")
    print("| kernel | Enzyme layout cycles | TapeFlow cycles | ours | gem5-SALAM orig/ad |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            k = KERNELS[n]
            data, pos = {}, 0
            for spec, arr in zip(k.args, k.inputs("real", seed=0)):
                data[f"arg{pos}"] = arr
                pos += 1
                if spec.is_float:  # its shadow
                    data[f"arg{pos}"] = np.zeros_like(arr)
                    pos += 1
            inputs = Path(tmp) / f"{n}.npz"
            np.savez(inputs, **data)
            e, t = (cycles(n, v, a.machine, a.cache_bytes, a.spm_bytes, inputs)
                    for v in ("enzyme", "tapeflow"))
            theirs = f"{salam_speedup(k.csv, a.cache_bytes):.2f}x" if k.csv else "-"
            print(f"| {n} | {e:.0f} | {t:.0f} | {e / t:.2f}x | {theirs} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
