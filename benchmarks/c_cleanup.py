"""Tape bytes and cycles of the gem5-SALAM C kernels before and after the C path's
clean-up: the translation as is with the unroll pragmas dropped (`raw`), with them applied
(`raw+unroll`), and the C path (`compile_c`: clean-up and unrolling), each through the
Enzyme layout and TapeFlow on accel-salam.

    python benchmarks/c_cleanup.py [--size small|real] [kernel ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

OVERRIDES = {"alexnet": {"DENSE_OUT": 1}}  # as benchmarks/validate_salam.py runs it


def programs(kernel, size: str) -> dict:
    from xdsl.dialects import scf

    from tapeflow.frontends.c import compile_c
    from tapeflow.registry import make_context
    from tapeflow.transforms.unroll import UNROLL_ATTR, UnrollPass

    flags = kernel.defines(size) if size != "real" else []
    flags += [f"-D{k}={v}" for k, v in OVERRIDES.get(kernel.name, {}).items()]
    text, name = kernel.path.read_text(), str(kernel.path)
    raw = compile_c(text, name, flags, optimize=False)
    rolled = raw.clone()
    for op in rolled.walk():
        if isinstance(op, scf.ForOp):
            op.attributes.pop(UNROLL_ATTR, None)
    UnrollPass().apply(make_context(), raw)
    return {"raw": rolled, "raw+unroll": raw, "c-path": compile_c(text, name, flags)}


def main() -> int:
    from tapeflow.eval.bundled import with_shadows
    from tapeflow.eval.jobs import tapeflow_options
    from tapeflow.eval.suites import KERNELS
    from tapeflow.hwmodel.config import load_machine
    from tapeflow.machines import machine_costs, pipeline
    from tapeflow.registry import make_context
    from tapeflow.simulate import simulate_auto

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernels", nargs="*", default=sorted(KERNELS))
    p.add_argument("--size", default="real", choices=("small", "real"))
    args = p.parse_args()
    machine = load_machine("accel-salam")
    costs = machine_costs(machine, "accel-salam")
    options = tapeflow_options(None, 0, 2, machine="accel-salam")
    print("| kernel | program | Enzyme-layout tape B | cycles | TapeFlow tape B | cycles |")
    print("|---|---|---:|---:|---:|---:|")
    for name in args.kernels:
        k = KERNELS[name]
        sizes = {**k.sizes[args.size], **(OVERRIDES.get(name, {}) if args.size == "real" else {})}
        inputs = with_shadows(k.args, k.make(sizes, np.random.default_rng(0)))
        for label, module in programs(k, args.size).items():
            cells = []
            for variant in ("enzyme", "tapeflow"):
                m = module.clone()
                for ps in pipeline(variant, options, costs):
                    ps.apply(make_context(), m)
                fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
                report = simulate_auto(m, k.grad_entry, fresh, machine).report
                cells += [f"{report['tape_bytes']:,}", f"{round(report['cycles']):,}"]
            print(f"| {name} | {label} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
