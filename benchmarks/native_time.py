"""Native CPU time of each bundled kernel's gradient: Enzyme layout against TapeFlow.

    python benchmarks/native_time.py                        # every kernel, default size
    python benchmarks/native_time.py --kernels gemm,mlp --runs 9 --sizes small,default
    python benchmarks/native_time.py --json out.json

The hardware model's presets predict cycles of machines that do not exist; this measures
the machine it runs on. Each variant's `@<kernel>_grad` is compiled as `tapeflow-bench`
compiles it (`tapeflow.eval.jobs.build_module`: the Enzyme layout is
`tapeflow-autodiff,tapeflow-lower-tape,tapeflow-cleanup`, TapeFlow the `tapeflow{...}`
pipeline with the default machine's scratchpad size), except that TapeFlow's cost model
decides for `machine=native`, as `tapeflow-exec -p tapeflow` does (`--machine` picks
another machine, e.g. `--machine default-45nm`; `--mode always` streams every region
loop, the pipeline before the cost model), then run natively as `tapeflow-exec` runs it
(`tapeflow-lower-to-std`, `mlir-opt-22`, `mlir-runner-22 --O3`;
`tapeflow.native.time_function_native`). The CPU has no DMA engine: streamed commits and
prefetches are copies the core does itself. `--regions` times the regions-only layout in
TapeFlow's place (the native cost model's rejected alternative). The `same` column says
whether the two variants compiled to the same ops, up to their order and SSA names
(then the ratio is mostly the timing's noise).

Timing: libc `clock()` (process CPU time, microsecond resolution) around the gradient
call only, inside the compiled program, so compilation and process start-up are not
counted. One round runs both variants, each in its own process with one untimed warm-up
call then `--calls` timed calls (3; the round's time is their minimum: a call preempted
by another job counts only if all are), every call from the same inputs; `--runs`
rounds, alternating which variant goes first, so both see the same machine load.
Printed per kernel and size: min and median over the rounds of each variant, and the ratio Enzyme / TapeFlow of
the minima and of the medians (> 1: TapeFlow's gradient is faster). Run it niced on an
otherwise idle machine; a loaded one inflates medians more than minima.
Before timing, each variant's native gradient is checked against the other's (the same
shadows to 1e-9 relative), so a faster wrong gradient cannot pass.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tapeflow import native  # noqa: E402
from tapeflow.eval.jobs import Job, build_module, kernel_arguments, kernels  # noqa: E402
from tapeflow.hwmodel.config import load_machine  # noqa: E402
from tapeflow.transforms.analysis.cost_model import NATIVE  # noqa: E402

VARIANTS = ("enzyme", "tapeflow")
"""The variants compared; `--regions` puts `regions` (regions only: `tapeflow-autodiff,
tapeflow-regions,tapeflow-lower-regions,tapeflow-cleanup`, every cache in a DRAM record
tape, nothing staged) in TapeFlow's place, the choice the native cost model refuses."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default="", help="comma-separated kernels (default: all)")
    p.add_argument("--runs", type=int, default=7, help="timed rounds per kernel (7)")
    p.add_argument("--calls", type=int, default=3,
                   help="timed calls per process; a round's time is their minimum (3)")
    p.add_argument("--sizes", default="default", help="comma-separated sizes (default)")
    p.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    p.add_argument("--machine", default=NATIVE,
                   help="the machine TapeFlow's cost model decides for (native)")
    p.add_argument("--mode", default="auto", choices=("auto", "always"),
                   help="TapeFlow's mode (auto)")
    p.add_argument("--regions", action="store_true",
                   help="time the regions-only layout instead of TapeFlow")
    return p


def _module(name: str, variant: str, size: str, spm_bytes: int, machine: str, mode: str):
    """The variant's module, as `tapeflow-bench` builds it but with TapeFlow's cost model
    deciding for `machine` (the bench passes on only presets and machine files)."""
    from xdsl.passes import PassPipeline

    from tapeflow.registry import get_all_passes, make_context

    job = Job(name, variant, size, spm_bytes=spm_bytes, mode=mode)
    if variant != "tapeflow":
        return build_module(job)
    spec = job.spec.replace("tapeflow{", f"tapeflow{{machine={json.dumps(machine)} ", 1)
    module = kernels()[name].load(size)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(make_context(), module)
    module.verify()
    return module


def _check_same_gradients(name: str, modules: dict[str, object], args: list) -> None:
    enzyme, other = modules
    outs = {}
    for v, module in modules.items():
        _, final = native.time_function_native(module, f"{name}_grad", _fresh(args), 1)
        outs[v] = final
    for a, b in zip(outs[enzyme], outs[other], strict=True):
        scale = max(float(np.max(np.abs(a))) if a.size else 0.0, 1e-300)
        if not np.allclose(a, b, rtol=1e-9, atol=1e-9 * scale):
            raise SystemExit(f"{name}: the two variants' native gradients differ")


def _ops(module: object) -> Counter[str]:
    """The module's printed ops with SSA names erased: equal counters mean the same ops
    up to their order and names (a cheap hint, not an equivalence proof)."""
    return Counter(re.sub(r"%[\w$.-]+", "%", line.strip()) for line in str(module).splitlines())


def _fresh(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def measure(name: str, size: str, runs: int, spm_bytes: int, machine: str = NATIVE,
            mode: str = "auto", variants: tuple[str, str] = VARIANTS,
            calls: int = 3) -> dict:  # fmt: skip
    modules = {v: _module(name, v, size, spm_bytes, machine, mode) for v in variants}
    args = kernel_arguments(name, size)
    _check_same_gradients(name, modules, args)
    seconds: dict[str, list[float]] = {v: [] for v in variants}
    for r in range(runs):
        order = variants if r % 2 == 0 else variants[::-1]
        for v in order:
            times, _ = native.time_function_native(
                modules[v], f"{name}_grad", _fresh(args), 1 + calls)
            seconds[v].append(min(times[1:]))  # the first call warms caches and page tables
    same = _ops(modules[variants[0]]) == _ops(modules[variants[1]])
    row: dict = {"kernel": name, "size": size, "runs": runs, "calls": calls, "machine": machine,
                 "mode": mode, "same_ops": same}  # fmt: skip
    for v in variants:
        row[f"{v}_min_s"] = min(seconds[v])
        row[f"{v}_median_s"] = statistics.median(seconds[v])
        row[f"{v}_s"] = seconds[v]
    for stat in ("min", "median"):
        flow = row[f"{variants[1]}_{stat}_s"]
        row[f"ratio_{stat}"] = row[f"enzyme_{stat}_s"] / flow if flow > 0 else float("nan")
    return row


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.runs < 1 or args.calls < 1:
        raise SystemExit("--runs and --calls must be at least 1")
    registry = kernels()
    names = [k for k in args.kernels.split(",") if k] or list(registry)
    unknown = [k for k in names if k not in registry]
    if unknown:
        raise SystemExit(f"unknown kernel(s): {', '.join(unknown)} (known: {', '.join(registry)})")
    native.find_tools()
    spm_bytes = load_machine().spm_size
    rows = []
    other = "regions" if args.regions else "tapeflow"
    label = ("regions only" if args.regions
             else f"TapeFlow: tapeflow{{machine={args.machine} mode={args.mode}}}")
    print(f"native CPU time of @<kernel>_grad (clock(), --O3), {args.runs} runs per variant"
          f" (each the min of {args.calls} calls),"
          f" interleaved; ratio = Enzyme layout / the other (> 1: the other faster); {label};"
          " same: the same ops up to order")
    print(f"{'kernel':12} {'size':8} {'Enzyme min':>11} {'median':>9} {other + ' min':>13} "
          f"{'median':>9} {'ratio min':>10} {'median':>7} {'same':>5}")
    for size in [s for s in args.sizes.split(",") if s]:
        for name in names:
            row = measure(name, size, args.runs, spm_bytes, args.machine, args.mode,
                          ("enzyme", other), args.calls)
            rows.append(row)
            print(f"{name:12} {size:8} {row['enzyme_min_s'] * 1e3:9.3f}ms "
                  f"{row['enzyme_median_s'] * 1e3:7.3f}ms {row[f'{other}_min_s'] * 1e3:11.3f}ms "
                  f"{row[f'{other}_median_s'] * 1e3:7.3f}ms {row['ratio_min']:9.3f}x "
                  f"{row['ratio_median']:6.3f}x {'yes' if row['same_ops'] else 'no':>5}",
                  flush=True)
    ratios = [r["ratio_min"] for r in rows if r["ratio_min"] == r["ratio_min"]]
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"geomean ratio of minima: {geo:.3f}x; worst: {min(ratios):.3f}x "
              f"({min(rows, key=lambda r: r['ratio_min'])['kernel']})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
