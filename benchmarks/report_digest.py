"""Every hardware-model report field of the bundled kernels, as one JSON, to compare commits.

A refactor of the simulator must leave every report bit-identical. This script runs
each bundled kernel (benchmarks/kernels) x size x pipeline stage the bench uses
(`enzyme`: Enzyme's layout, `regions`: regions only, `tapeflow`: the full pipeline) x
machine preset (default-45nm, accel-salam) on the simulation paths:

- `fast`: the compiled path as `tapeflow-bench` runs it (`simulate_fast_many`, one run
  for both presets; the op-by-op model when the compiler rejects an op);
- `interp`: the op-by-op listener (`tapeflow.simulate.simulate`), small sizes only;
- `jit`: the compiled path with every loop nest's numba kernel forced on
  (`Trace.jit_after = jit_min_ops = 0`), small sizes only, when asked (`--paths`).

It writes one flat JSON object: `kernel/size/stage/preset/path` -> {report field (dotted
path) -> value, `grad.<argument>`/`result<i>` -> sha256 of the array's bytes}. Floats are
kept as JSON writes them (`repr`, exact).

    python benchmarks/report_digest.py -o /tmp/base.json [--sizes small] [--kernels gemm,lstm]
    python benchmarks/report_digest.py --compare /tmp/base.json /tmp/head.json

`--compare` prints every differing field and exits 1 if there is any (0 if none).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STAGES = ("enzyme", "regions", "tapeflow")
PRESETS = ("default-45nm", "accel-salam")
PATHS = ("fast", "interp", "jit")


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value


def _hash(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    return f"{a.dtype}{a.shape}:{hashlib.sha256(a.tobytes()).hexdigest()}"


def _digest(sim: Any, arg_names: list[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    _flatten(sim.report, "", fields)
    run = sim.run
    for p in run.memref_positions:
        fields[f"grad.{arg_names[p]}"] = _hash(np.asarray(run.arguments[p]))
    for i, r in enumerate(run.results):
        fields[f"result{i}"] = _hash(np.asarray(r))
    return fields


def _run_fast(module: Any, entry: str, make_args: Any, machines: list[Any]) -> list[Any]:
    """As `tapeflow.eval.run` runs a job: one compiled run for every machine, or op by op."""
    from tapeflow.hwmodel.compiled.limits import UnsupportedOpError
    from tapeflow.hwmodel.fastsim import compiled
    from tapeflow.simulate import simulate, simulate_fast_many

    try:
        program = compiled(module)
    except UnsupportedOpError:
        return [simulate(module, entry, make_args(), m) for m in machines]
    return simulate_fast_many(program, entry, make_args(), machines)


def collect(kernels: list[str], sizes: list[str], stages: list[str], paths: list[str],
            log: Any = sys.stderr) -> dict[str, dict[str, Any]]:  # fmt: skip
    from tapeflow.hwmodel.compiled.module import Trace
    from tapeflow.hwmodel.config import load_machine
    from tapeflow.simulate import simulate

    from tapeflow.eval.bundled import KERNELS
    from tapeflow.eval.jobs import Job, build_module, kernel_arguments
    from tapeflow.eval.run import argument_names

    machines = [load_machine(p) for p in PRESETS]
    out: dict[str, dict[str, Any]] = {}
    for name in kernels:
        names = argument_names(name)
        entry = KERNELS[name].grad_entry
        for size in sizes:
            def make_args(name: str = name, size: str = size) -> list[Any]:
                return kernel_arguments(name, size)

            for stage in stages:
                t0 = time.perf_counter()
                module = build_module(Job(name, stage, size))
                key = f"{name}/{size}/{stage}"
                if "fast" in paths:
                    for preset, sim in zip(PRESETS, _run_fast(module, entry, make_args,
                                                              machines), strict=True):  # fmt: skip
                        out[f"{key}/{preset}/fast"] = _digest(sim, names)
                if size == "small" and "interp" in paths:
                    for preset, m in zip(PRESETS, machines, strict=True):
                        out[f"{key}/{preset}/interp"] = _digest(
                            simulate(module, entry, make_args(), m), names)
                if size == "small" and "jit" in paths:
                    saved = Trace.jit_after, Trace.jit_min_ops
                    Trace.jit_after = Trace.jit_min_ops = 0
                    try:
                        sims = _run_fast(module, entry, make_args, machines)
                    finally:
                        Trace.jit_after, Trace.jit_min_ops = saved
                    for preset, sim in zip(PRESETS, sims, strict=True):
                        out[f"{key}/{preset}/jit"] = _digest(sim, names)
                print(f"{key}: {time.perf_counter() - t0:.1f}s", file=log, flush=True)
    return out


def compare(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> list[str]:
    """One line per run or field that is in one digest only or differs."""
    lines = []
    for run in sorted(a.keys() | b.keys()):
        if run not in a or run not in b:
            lines.append(f"{run}: only in {'A' if run in a else 'B'}")
            continue
        fa, fb = a[run], b[run]
        for f in sorted(fa.keys() | fb.keys()):
            va, vb = fa.get(f, "<missing>"), fb.get(f, "<missing>")
            if va != vb and not (va != va and vb != vb):  # NaN equals NaN here
                lines.append(f"{run}: {f}: {va!r} != {vb!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    from tapeflow.eval.bundled import KERNELS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("-o", "--output", help="where to write the JSON digest")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two digests")
    p.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated (default: all)")
    p.add_argument("--sizes", default="small,default", help="comma-separated (small,default)")
    p.add_argument("--stages", default=",".join(STAGES),
                   help=f"comma-separated ({','.join(STAGES)})")
    p.add_argument("--paths", default="fast,interp",
                   help="comma-separated (fast,interp,jit; default fast,interp)")
    a = p.parse_args(argv)
    if a.compare:
        docs = [json.loads(Path(f).read_text()) for f in a.compare]
        lines = compare(*docs)
        for line in lines:
            print(line)
        runs = len(docs[0].keys() | docs[1].keys())
        fields = sum(len(v) for v in docs[0].values())
        print(f"{len(lines)} difference(s) over {runs} runs ({fields} fields in A)")
        return 1 if lines else 0
    if not a.output:
        p.error("give -o FILE (or --compare A B)")
    split = lambda s: [x for x in s.split(",") if x]  # noqa: E731
    for what, given, known in (("kernel", split(a.kernels), KERNELS),
                               ("stage", split(a.stages), STAGES),
                               ("path", split(a.paths), PATHS),
                               ("size", split(a.sizes), ("small", "default"))):  # fmt: skip
        bad = [g for g in given if g not in known]
        if bad:
            p.error(f"unknown {what}(s): {', '.join(bad)}")
    t0 = time.perf_counter()
    out = collect(split(a.kernels), split(a.sizes), split(a.stages), split(a.paths))
    Path(a.output).write_text(json.dumps(out, indent=0, sort_keys=True))
    print(f"{len(out)} runs written to {a.output} in {time.perf_counter() - t0:.0f}s",
          file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
