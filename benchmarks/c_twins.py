"""The C kernels (benchmarks/kernels/c/) against their MLIR twins, through the pipeline.

    python benchmarks/c_twins.py [--size small|default] [--kernels gemm,lstm]

For each kernel and each variant of `tapeflow-bench` (Enzyme layout, regions only,
TapeFlow): whether the gradient run leaves every memref argument bit-identical, and the
simulated cycles, tape bytes and instruction counts of the C build and of the MLIR build
(`tapeflow.eval.run.run_job`, the benchmark's own compile-and-simulate step).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    from tapeflow.eval.jobs import VARIANTS, Job, kernels
    from tapeflow.eval.run import run_job

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=("small", "default"), default="small")
    p.add_argument("--kernels", default=None, help="comma-separated (default: all)")
    args = p.parse_args(argv)
    names = args.kernels.split(",") if args.kernels else list(kernels())
    print(f"| kernel | variant | gradients | cycles C / MLIR | tape bytes C / MLIR | "
          f"instructions C / MLIR |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|")
    same = 0
    total = 0
    for name in names:
        c_file = str(ROOT / "benchmarks" / "kernels" / "c" / f"{name}.c")
        for variant in VARIANTS:
            runs = [
                run_job(Job(kernel=name, variant=variant, size=args.size,
                                        c_source=source))  # fmt: skip
                for source in (c_file, "")
            ]
            for r in runs:
                if r["error"]:
                    print(f"{name} {variant}: {r['error']}", file=sys.stderr)
                    return 1
            c, m = runs
            identical = c["grads"].keys() == m["grads"].keys() and all(
                c["grads"][k].tobytes() == m["grads"][k].tobytes() for k in c["grads"]
            )
            rc, rm = c["report"], m["report"]
            total += 1
            same += rc["cycles"] == rm["cycles"]
            print(f"| {name} | {variant} | {'bit-identical' if identical else 'DIFFER'} | "
                  f"{rc['cycles']:,.1f} / {rm['cycles']:,.1f} | "
                  f"{rc['tape_bytes']:,} / {rm['tape_bytes']:,} | "
                  f"{rc['ops']['instructions']:,} / {rm['ops']['instructions']:,} |")  # fmt: skip
    print(f"\nequal cycles: {same} of {total} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
