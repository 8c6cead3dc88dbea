"""Does TapeFlow do no harm? Its cycles over the Enzyme layout's, every kernel and machine.

    nice -n 10 python benchmarks/no_harm.py [--size small,default] [--machine A,B]
        [--kernels gemm,lstm] [--mode auto|always]

For every bundled kernel (benchmarks/kernels), size and machine preset (default: both of
`tapeflow-bench`'s, default-45nm and accel-salam), compiles the gradient the Enzyme way
and the TapeFlow way (`tapeflow{... machine=NAME mode=M}`, as `tapeflow-bench` does: the
pipeline's cost model decides for the machine the program is simulated on), runs both with
`tapeflow.eval.run.run_jobs_shared`
(the benchmark's own compile-and-simulate step), checks that the gradients are
bit-identical, and prints TapeFlow cycles / Enzyme-layout cycles per kernel and the worst
ratio. The goal of issue 20 is a worst ratio of at most 1.01 with the default mode (auto).
`--stencil`: the issue's 1-D stencil with run-time sizes against its #define twin
(TapeFlow cycles within 1.1x, DMA bytes within 2x of the tape's 560 B).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tapeflow.eval.jobs import MACHINES, Job, kernels, pipeline_spec  # noqa: E402
from tapeflow.eval.run import compare_gradients, run_jobs_shared, simulate_many  # noqa: E402

GOAL = 1.01


def measure(kernel: str, size: str, preset: str, mode: str) -> dict[str, object]:
    from tapeflow.hwmodel.config import load_machine

    machine = load_machine(preset)
    jobs = [
        Job(kernel=kernel, variant=v, size=size, machine=machine.raw,
                  machine_label=preset, spm_bytes=machine.spm_size, mode=mode)  # fmt: skip
        for v in ("enzyme", "tapeflow")
    ]
    enzyme, tapeflow = run_jobs_shared(jobs)["results"]
    for r in (enzyme, tapeflow):
        if r["error"]:
            raise SystemExit(f"error: {kernel} {size} {preset} {r['variant']}: {r['error']}")
    same, _ = compare_gradients({"enzyme": enzyme, "regions": tapeflow, "tapeflow": tapeflow})
    e, t = enzyme["report"], tapeflow["report"]
    return {"kernel": kernel, "size": size, "machine": preset, "enzyme": e["cycles"],
            "tapeflow": t["cycles"], "ratio": t["cycles"] / e["cycles"],
            "dma": t["dma"]["bytes"] if "dma" in t else 0, "identical": same}  # fmt: skip


STENCILS = ROOT / "test" / "python" / "Inputs"
"""stencil_dynamic.c (`n`, `steps` arguments) and its #define twin stencil_fixed.c."""


def stencil(preset: str, mode: str) -> dict[str, float]:
    """The issue's run-time-sized 1-D stencil (n = 9, steps = 5: 35 records of 16 B)
    against its #define twin: cycles and DMA bytes of TapeFlow, cycles of the Enzyme layout."""
    import numpy as np
    from xdsl.passes import PassPipeline

    from tapeflow.frontends.c import compile_c
    from tapeflow.hwmodel.config import load_machine
    from tapeflow.registry import get_all_passes, make_context

    machine = load_machine(preset)
    out: dict[str, float] = {}
    for twin, scalars in (("dynamic", [9, 5]), ("fixed", [])):
        path = STENCILS / f"stencil_{twin}.c"
        for variant in ("enzyme", "tapeflow"):
            spec = pipeline_spec(variant, machine.spm_size, 0, 2, True, preset, mode)
            module = compile_c(path.read_text(), str(path))
            PassPipeline.parse_spec(get_all_passes(), spec).apply(make_context(), module)
            u = np.random.default_rng(3).uniform(-1, 1, size=9)
            args = lambda: [u.copy(), np.zeros(9), *scalars, 1.0]  # noqa: E731
            (sim,), _ = simulate_many(module, "stencil_grad", args, [machine], "auto")
            out[f"{twin}/{variant}"] = sim.report["cycles"]
            if variant == "tapeflow":
                out[f"{twin}/dma"] = sim.report["dma"]["bytes"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="small", help="small, default or small,default")
    p.add_argument("--machine", default=",".join(MACHINES))
    p.add_argument("--kernels", default=None, help="comma-separated (default: all)")
    p.add_argument("--mode", default="auto", choices=("auto", "always"))
    p.add_argument("--stencil", action="store_true",
                   help="only the run-time-sized stencil against its #define twin")
    args = p.parse_args(argv)
    if args.stencil:
        print("| machine | mode | TapeFlow cycles dynamic / #define | ratio | DMA bytes "
              "dynamic / #define (tape 560 B) | Enzyme cycles dynamic / #define |")
        print("|---|---|---:|---:|---:|---:|")
        for preset in args.machine.split(","):
            for mode in ("auto", "always"):
                r = stencil(preset, mode)
                print(f"| {preset} | {mode} | {r['dynamic/tapeflow']:,.0f} / "
                      f"{r['fixed/tapeflow']:,.0f} | "
                      f"{r['dynamic/tapeflow'] / r['fixed/tapeflow']:.3f}x | "
                      f"{r['dynamic/dma']:,} / {r['fixed/dma']:,} | "
                      f"{r['dynamic/enzyme']:,.0f} / {r['fixed/enzyme']:,.0f} |")  # fmt: skip
        return 0
    names = args.kernels.split(",") if args.kernels else list(kernels())
    print("| size | machine | kernel | Enzyme cycles | TapeFlow cycles | ratio | gradients |")
    print("|---|---|---|---:|---:|---:|---|")
    rows = []
    for size in args.size.split(","):
        for preset in args.machine.split(","):
            for name in names:
                row = measure(name, size, preset, args.mode)
                rows.append(row)
                print(f"| {size} | {preset} | {name} | {row['enzyme']:,.0f} | "
                      f"{row['tapeflow']:,.0f} | {row['ratio']:.3f}x | "
                      f"{'bit-identical' if row['identical'] else 'DIFFER'} |", flush=True)  # fmt: skip
    worst = max(rows, key=lambda r: r["ratio"])
    print(f"\nworst ratio (mode={args.mode}): {worst['ratio']:.3f}x "
          f"({worst['kernel']}, {worst['size']}, {worst['machine']}); goal <= {GOAL}x")  # fmt: skip
    bad = [r for r in rows if not r["identical"]]
    if bad:
        print(f"gradients differ: {len(bad)} run(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
