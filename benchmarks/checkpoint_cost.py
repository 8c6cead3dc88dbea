"""What checkpointing the time loop costs and saves: Enzyme layout, TapeFlow, TapeFlow +
`tapeflow-checkpoint` (s snapshots), on both machine presets.

    python benchmarks/checkpoint_cost.py [--size default|small] [--kernels mass_spring,lstm]
                                         [--snapshots 4,8,16] [--schedules binomial,periodic]
                                         [--json] [--plot DIR] [--from-json FILE]

Per kernel, machine and variant (every variant ends with `tapeflow-cleanup`, as in
`tapeflow-bench`; TapeFlow's scratchpad is the machine's `spm.size`):
- cycles: the hardware model's (`simulate_fast_many`, one run per IR);
- tape: the report's `tape_bytes` (peak live DRAM tape: record tapes, FIFOs, Enzyme-layout
  arrays; with checkpointing, one segment's tape at a time);
- snapshots: bytes of the `memref.alloc`s marked `tapeflow.snapshot` (s + 1 slots of the
  loop-carried state, see `transforms/checkpoint.py`), static in the IR; their loads and
  stores are ordinary traffic in the model;
- footprint = tape + snapshots, and its reduction against TapeFlow's tape;
- extra ops = the report's `ops.instructions` minus TapeFlow's on the same machine: the
  recomputed steps, the snapshot copies and the schedule's index arithmetic;
- recomputed steps: forward steps run untaped after the forward sweep (`@*_adv` calls
  from the reverse sweep), counted by running the schedule (step counts only, no model).
The gradients (every memref argument after the run) must be bit-identical to TapeFlow's;
the script says so or stops.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tapeflow.eval.jobs import MACHINES, kernel_arguments, pipeline_spec  # noqa: E402
from tapeflow.eval.markdown import fmt_bytes, fmt_x  # noqa: E402

TIME_LOOP_KERNELS = ("mass_spring", "lstm", "pwl", "ragged_rnn")
"""The bundled kernels whose outer loop carries a tape (jacobi2d's time loop caches nothing)."""


def _machines() -> dict[str, Any]:
    from tapeflow.hwmodel.config import DEFAULT_MACHINE, load_machine

    return {
        name: load_machine(None if name == DEFAULT_MACHINE else name) for name in MACHINES
    }


def _compile(kernel: str, size: str, spec: str) -> Any:
    from xdsl.passes import PassPipeline

    from tapeflow.eval.bundled import KERNELS
    from tapeflow import runner
    from tapeflow.registry import get_all_passes, make_context

    k = KERNELS[kernel]
    module = runner.load_module(k.source(size), str(k.path(size)))
    PassPipeline.parse_spec(get_all_passes(), spec).apply(make_context(), module)
    module.verify()
    return module


def snapshot_bytes(module: Any) -> int:
    from tapeflow.transforms.checkpoint import SNAPSHOT_ATTR
    from xdsl.dialects import memref
    from xdsl.dialects.builtin import MemRefType

    from tapeflow.dialects.region import element_size

    total = 0
    for op in module.walk():
        if isinstance(op, memref.AllocOp) and SNAPSHOT_ATTR in op.attributes:
            t = op.memref.type
            assert isinstance(t, MemRefType)
            total += int(np.prod(t.get_shape())) * element_size(t.element_type)
    return total


def recomputed_steps(module: Any, entry: str, args: list[Any]) -> int:
    """Untaped steps after the forward sweep, in `tapeflow-autodiff,tapeflow-checkpoint`'s
    IR (before layers strip-mine the segment loop): how often the step loops of @*_adv and
    @*_seg ran their bodies (the fast path's block counts, no model). Every step is
    replayed taped once and the forward sweep runs each step untaped once, so recomputed =
    adv - seg."""
    from tapeflow.hwmodel.compiled.module import CompiledModule
    from tapeflow.simulate import run_compiled
    from xdsl.dialects import func, scf

    program = CompiledModule(module)
    _, trace = run_compiled(program, entry, args)
    firsts: dict[Any, str] = {}
    for f in module.ops:
        if isinstance(f, func.FuncOp):
            kind = f.sym_name.data.rsplit("_", 1)[-1]
            if kind in ("adv", "seg"):
                loop = next(o for o in f.body.block.ops if isinstance(o, scf.ForOp))
                firsts[loop.body.block.first_op] = kind
    steps = {"adv": 0, "seg": 0}
    for n, ops in zip(trace.block_counts, program.segments, strict=True):
        for op in ops:
            if op in firsts:
                steps[firsts[op]] += n
    return steps["adv"] - steps["seg"]


def _gradient_bits(sim: Any) -> list[bytes]:
    return [
        np.ascontiguousarray(a).tobytes() for a in sim.run.arguments if isinstance(a, np.ndarray)
    ]


def measure(kernel: str, size: str, snapshots: list[int], schedules: list[str]) -> list[dict]:
    from tapeflow.simulate import simulate_fast_many

    from tapeflow.eval.bundled import KERNELS

    entry = KERNELS[kernel].grad_entry
    machines = _machines()
    rows: list[dict] = []

    def args() -> list[Any]:
        return kernel_arguments(kernel, size)

    enzyme = _compile(kernel, size, pipeline_spec("enzyme", 0, 0, 2))
    sims = simulate_fast_many(enzyme, entry, args(), list(machines.values()))
    reference: dict[str, list[bytes]] = {}
    recomputed: dict[tuple[str, int], int] = {}
    for (label, machine), sim in zip(machines.items(), sims, strict=True):
        rows.append(_row(kernel, label, "Enzyme layout", sim, 0, None))
        reference[label] = _gradient_bits(sim)
    for label, machine in machines.items():
        spm = machine.spm_size
        tf_spec = pipeline_spec("tapeflow", spm, 0, 2)
        tf = simulate_fast_many(_compile(kernel, size, tf_spec), entry, args(), [machine])[0]
        assert _gradient_bits(tf) == reference[label], (kernel, label, "TapeFlow")
        base = _row(kernel, label, "TapeFlow", tf, 0, None)
        rows.append(base)
        for schedule in schedules:
            for s in snapshots:
                key = (schedule, s)
                if key not in recomputed:
                    plain = _compile(
                        kernel,
                        size,
                        f"tapeflow-autodiff,tapeflow-checkpoint"
                        f"{{schedule={schedule} snapshots={s}}}",
                    )
                    recomputed[key] = recomputed_steps(plain, entry, args())
                spec = tf_spec.replace("}", f" checkpoint={schedule}-{s}}}")
                module = _compile(kernel, size, spec)
                sim = simulate_fast_many(module, entry, args(), [machine])[0]
                same = _gradient_bits(sim) == reference[label]
                if not same:
                    raise SystemExit(f"{kernel} {label} {spec}: gradients differ")
                row = _row(
                    kernel,
                    label,
                    f"TapeFlow+ckpt {schedule} s={s}",
                    sim,
                    snapshot_bytes(module),
                    base,
                )
                row["recomputed_steps"] = recomputed[key]
                rows.append(row)
    return rows


def _row(kernel: str, machine: str, variant: str, sim: Any, snaps: int, base: dict | None) -> dict:
    r = sim.report
    tape = r["tape_bytes"]
    row = {
        "kernel": kernel,
        "machine": machine,
        "variant": variant,
        "cycles": r["cycles"],
        "tape_bytes": tape,
        "snapshot_bytes": snaps,
        "footprint_bytes": tape + snaps,
        "instructions": r["ops"]["instructions"],
    }
    if base is not None:
        row["footprint_reduction"] = base["tape_bytes"] / max(1, tape + snaps)
        row["extra_ops"] = row["instructions"] - base["instructions"]
        row["cycles_vs_tapeflow"] = row["cycles"] / base["cycles"]
    return row


def markdown(rows: list[dict]) -> str:
    out = [
        "| kernel | machine | variant | cycles | x TapeFlow | tape | snapshots | footprint |"
        " TapeFlow tape / footprint | extra ops | recomputed steps |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['kernel']} | {r['machine']} | {r['variant']} | {r['cycles']:.4g} | "
            f"{fmt_x(r.get('cycles_vs_tapeflow'))} | {fmt_bytes(r['tape_bytes'])} | "
            f"{fmt_bytes(r['snapshot_bytes'])} | {fmt_bytes(r['footprint_bytes'])} | "
            f"{fmt_x(r.get('footprint_reduction'), 1)} | {r.get('extra_ops', '')} | "
            f"{r.get('recomputed_steps', '')} |"
        )
    return "\n".join(out)


def write_plots(rows: list[dict], out_dir: str) -> list[str]:
    """One PNG per kernel: cycles against DRAM footprint (tape + snapshots), log-log, one
    marker per machine, the binomial points joined; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    paths = []
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        for machine, marker in zip(dict.fromkeys(r["machine"] for r in rows), "os^v"):
            mine = [r for r in rows if r["kernel"] == kernel and r["machine"] == machine]
            for r in mine:
                xy = (r["footprint_bytes"] / 1024, r["cycles"])
                ax.scatter(*xy, marker=marker, color="black" if "ckpt" not in r["variant"]
                           else "tab:blue")  # fmt: skip
                label = r["variant"].replace("TapeFlow+ckpt ", "")
                ax.annotate(label, xy, fontsize=6, xytext=(3, 3), textcoords="offset points")
            ckpt = sorted((r for r in mine if "ckpt binomial" in r["variant"]),
                          key=lambda r: r["footprint_bytes"])  # fmt: skip
            ax.plot([r["footprint_bytes"] / 1024 for r in ckpt], [r["cycles"] for r in ckpt],
                    lw=0.8, marker=marker, label=f"{machine}: binomial")  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("DRAM footprint: tape + snapshots (KiB)")
        ax.set_ylabel("cycles")
        ax.set_title(f"{kernel}: cycles against DRAM footprint")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = f"{out_dir}/checkpoint-{kernel}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", default="default", choices=("small", "default"))
    p.add_argument("--kernels", default=",".join(TIME_LOOP_KERNELS))
    p.add_argument("--snapshots", default="4,8,16")
    p.add_argument("--schedules", default="binomial")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--plot", metavar="DIR", help="write checkpoint-KERNEL.png plots into DIR")
    p.add_argument("--from-json", metavar="FILE", help="rows from an earlier --json run")
    a = p.parse_args(argv)
    rows: list[dict] = []
    if a.from_json:
        rows = json.loads(Path(a.from_json).read_text())
    else:
        for kernel in a.kernels.split(","):
            snapshots = [int(s) for s in a.snapshots.split(",")]
            rows += measure(kernel, a.size, snapshots, a.schedules.split(","))
    print(json.dumps(rows, indent=1) if a.json else markdown(rows))
    if a.plot:
        for path in write_plots(rows, a.plot):
            print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
