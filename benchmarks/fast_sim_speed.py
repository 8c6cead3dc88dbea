"""Speed of the compiled fast path (hwmodel.compiled + hwmodel.fastsim) vs the op-by-op model.

    python benchmarks/fast_sim_speed.py                          # gemm, mlp, lstm
    python benchmarks/fast_sim_speed.py --kernels gemm --stages lower-tape,tapeflow
    python benchmarks/fast_sim_speed.py --json out.json
    python benchmarks/fast_sim_speed.py --machine accel-salam --kernels gemm,lstm --no-model

For each kernel and pipeline stage (`lower-tape`: the Enzyme-layout baseline,
`tapeflow`: the whole pipeline, ...) it prints:
- `fast@default`: `simulate_fast` on the default-size kernel (the evaluation's workload):
  simulated ops and memory accesses (L1 + scratchpad) per second, with the split between
  running the compiled code (`exec`) and the rest (cache simulator, timing, report);
- `model@default`: the op-by-op model on the first `--model-ops` ops of the same run (a
  whole default-size run would take many minutes): its rates over that prefix;
- `fast@small` and `model@small`: the compiled path and the op-by-op model
  (`tapeflow.simulate.simulate`, an interpreter listener) on the small size, where the
  op-by-op model finishes in seconds, and their ratio; the two reports are compared
  (`same` = identical reports).
`--baseline REV` (e.g. `HEAD~1`) also runs this measurement with the code of git revision
REV, kernel by kernel in the same run (a copy of the tree from `git archive`, imported
instead of the installed package, in a subprocess), and prints the ratio of CPU times
(`base@REV` rows; the ratio needs the same ops and accesses on both sides).
`--sweep 262144,524288,...` also times `simulate_fast_many`: one run feeding one machine
per L2 size (rates there are per machine-set). Rates use process CPU time
(`time.process_time`), which a loaded machine perturbs less than wall time; wall time
is printed too. The numba cache kernel is warmed up first.
Sibling script: benchmarks/sim_speed.py (the hardware model's own benchmark).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STAGES = {
    "primal": None,
    "autodiff": "tapeflow-autodiff",
    "lower-tape": "tapeflow-autodiff,tapeflow-lower-tape",
    "regions": "tapeflow-autodiff,tapeflow-regions",
    "tapeflow": "tapeflow{mode=always}",
}


def build(kernel: Any, size: str, stage: str) -> tuple[Any, str, list[Any]]:
    from xdsl.dialects.builtin import MemRefType
    from xdsl.passes import PassPipeline

    from tapeflow import runner
    from tapeflow.registry import get_all_passes, make_context

    module = runner.load_module(kernel.source(size), f"{kernel.name}.mlir")
    spec = STAGES[stage]
    if spec is None:
        return module, kernel.entry, kernel.inputs(size)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(make_context(), module)
    fn = runner.find_function(module, kernel.grad_entry)
    nscal = sum(1 for t in fn.function_type.inputs.data if not isinstance(t, MemRefType))
    return module, kernel.grad_entry, runner.make_arguments(fn, seed=0, scalars=[1.0] * nscal)


def counts(report: dict[str, Any]) -> tuple[int, int]:
    """Ops and the core's memory accesses: its first cache level's (L2 on a machine
    without an L1, as accel-salam) and the scratchpad's."""
    ops = sum(report["ops"]["by_class"].values())
    levels = report["levels"]
    first = levels["L1"]["accesses"] or levels["L2"]["accesses"]
    return ops, first + levels["SPM"]["accesses"]


def timed(fn: Any) -> tuple[Any, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def fast_run(module: Any, entry: str, args: list[Any], machine: Any = None) -> dict[str, Any]:
    from tapeflow.hwmodel.compiled.module import CompiledModule, Trace
    from tapeflow.simulate import run_compiled, simulate_fast

    program, t_compile, _ = timed(lambda: CompiledModule(module))

    class _NoSink(Trace):
        def consume(self, addrs: Any, pcs: Any, writes: Any) -> None:
            pass

    _, t_exec, _ = timed(lambda: run_compiled(program, entry, copy.deepcopy(args),
                                              _NoSink(program)))  # fmt: skip
    result, t_cpu, t_wall = timed(lambda: simulate_fast(program, entry, copy.deepcopy(args),
                                                        machine))  # fmt: skip
    ops, acc = counts(result.report)
    return {
        "compile_s": t_compile, "exec_s": t_exec, "cpu_s": t_cpu, "wall_s": t_wall,
        "ops": ops, "accesses": acc, "ops_per_s": ops / t_cpu, "accesses_per_s": acc / t_cpu,
        "report": result.report, "kernels": len(getattr(program, "kernels", ())),
        "kernels_ran": sum(1 for k in getattr(program, "kernels", ()) if k.runs),
    }  # fmt: skip


def model_run(module: Any, entry: str, args: list[Any], machine: Any = None) -> dict[str, Any]:
    from tapeflow.simulate import simulate

    result, t_cpu, t_wall = timed(lambda: simulate(module, entry, copy.deepcopy(args), machine))
    ops, acc = counts(result.report)
    return {
        "cpu_s": t_cpu, "wall_s": t_wall, "ops": ops, "accesses": acc,
        "ops_per_s": ops / t_cpu, "accesses_per_s": acc / t_cpu, "report": result.report,
    }  # fmt: skip


class _Stop(Exception):
    pass


def model_prefix(module: Any, entry: str, args: list[Any], limit: int,
                 machine: Any = None) -> dict[str, Any]:  # fmt: skip
    """The op-by-op model on the first `limit` ops of a run (it is too slow for a whole
    default-size run): rates over that prefix."""
    from xdsl.interpreter import Interpreter

    from tapeflow import runner
    from tapeflow.hwmodel.listener import HardwareModel

    model = HardwareModel(machine)

    class Limit(Interpreter.Listener):
        n = 0

        def will_interpret_op(self, op: Any, a: Any) -> None:
            self.n += 1
            if self.n > limit:
                raise _Stop

    stopper = Limit()

    def go() -> None:
        try:
            runner.run_function(module, entry, copy.deepcopy(args), listeners=[model, stopper])
        except Exception as e:  # runner re-raises as InterpretationError
            if not isinstance(e, _Stop) and not isinstance(e.__cause__, _Stop):
                raise

    _, t_cpu, t_wall = timed(go)
    model.flush()
    ops = sum(model.counts.ops)
    acc = model.counts.loads + model.counts.stores
    return {
        "cpu_s": t_cpu, "wall_s": t_wall, "ops": ops, "accesses": acc,
        "ops_per_s": ops / t_cpu, "accesses_per_s": acc / t_cpu,
    }  # fmt: skip


class Baseline:
    """The tree of git revision `rev` in a temporary directory, laid out as the installed
    package (pyproject's `package-dir` as symlinks under `tapeflow/`), so that a
    subprocess with it first on PYTHONPATH imports that revision's code."""

    def __init__(self, rev: str):
        self.rev = rev
        self._tmp = tempfile.TemporaryDirectory(prefix="tapeflow-baseline-")
        self.src = Path(self._tmp.name)
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True,
                             check=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            archive.extractall(self.src, filter="data")
        with open(self.src / "pyproject.toml", "rb") as f:
            layout = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
        for package, folder in layout.items():
            parts = package.split(".")
            if len(parts) > 1:
                link = self.src.joinpath(layout.get(parts[0], parts[0]), *parts[1:])
                if not link.exists():
                    link.symlink_to(self.src / folder, target_is_directory=True)
        self.env = dict(os.environ, PYTHONPATH=str(self.src))
        where = subprocess.run(
            [sys.executable, "-c", "import tapeflow.hwmodel.compiled as c; print(c.__file__)"],
            env=self.env, cwd=self.src, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        if not Path(where).resolve().is_relative_to(self.src.resolve()):
            raise RuntimeError(f"the baseline imports {where}, not the tree of {rev}")

    def has_kernel(self, name: str) -> bool:
        return (self.src / "benchmarks" / "kernels" / "default" / f"{name}.mlir").exists()

    def measure(self, kernel: str, stages: str, size: str) -> dict[str, dict[str, Any]]:
        """Stage -> the `fast@size` row of REV's own fast_sim_speed.py for one kernel: the
        faster of two runs (the first may include one-time costs, e.g. numba compiling
        the cache kernels of a tree it has not seen)."""
        out = self.src / f"{kernel}.json"
        subprocess.run(
            [sys.executable, "benchmarks/fast_sim_speed.py", "--kernels", f"{kernel},{kernel}",
             "--stages", stages, "--size", size, "--no-model", "--json", str(out)],
            env=self.env, cwd=self.src, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        best: dict[str, dict[str, Any]] = {}
        for r in json.loads(out.read_text())["rows"]:
            if r["path"] != f"fast@{size}":
                continue
            if r["stage"] not in best or r["cpu_s"] < best[r["stage"]]["cpu_s"]:
                best[r["stage"]] = r
        return best


def warm_up() -> None:
    from tapeflow import runner
    from tapeflow.simulate import simulate_fast

    text = """func.func @f(%a: memref<4096xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4096 : index
  %z = arith.constant 0.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %a[%i] : memref<4096xf64>
    %t = arith.addf %acc, %v : f64
    scf.yield %t : f64
  }
  func.return %s : f64
}"""  # phase ends inside a loop too (the cache kernel with cuts)
    import numpy as np

    simulate_fast(runner.load_module(text, "w.mlir"), "f", [np.zeros(4096)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default="gemm,mlp,lstm")
    parser.add_argument("--stages", default="lower-tape,tapeflow")
    parser.add_argument("--size", default="default", help="size for the fast path")
    parser.add_argument("--no-model", action="store_true", help="skip the op-by-op runs")
    parser.add_argument("--machine", default="",
                        help="simulate on this machine (a preset or TOML; default: default-45nm)")  # fmt: skip
    parser.add_argument(
        "--model-ops",
        type=int,
        default=1_000_000,
        help="ops of the default-size run the op-by-op model simulates",
    )
    parser.add_argument("--json", help="write the numbers (without reports) to this file")
    parser.add_argument("--baseline", metavar="REV",
                        help="also measure git revision REV (e.g. HEAD~1) and print the ratio")  # fmt: skip
    parser.add_argument(
        "--sweep",
        default="",
        help="comma-separated L2 sizes: also time simulate_fast_many (one run "
        "feeding one machine per size, the baseline's cache sweep)",
    )
    args = parser.parse_args(argv)

    from tapeflow.eval.bundled import KERNELS
    from tapeflow.hwmodel.config import load_machine

    machine = load_machine(args.machine or None)

    warm_up()
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores (rates use process CPU time)")
    header = (f"{'kernel':<12}{'stage':<12}{'path':<14}{'ops':>11}{'accesses':>11}"
              f"{'cpu s':>8}{'wall s':>8}{'Mops/s':>8}{'Macc/s':>8}  notes")  # fmt: skip
    print(header)
    print("-" * len(header))
    rows: list[dict[str, Any]] = []
    baseline = Baseline(args.baseline) if args.baseline else None

    def line(kernel: str, stage: str, path: str, r: dict[str, Any], note: str = "") -> None:
        print(f"{kernel:<12}{stage:<12}{path:<14}{r['ops']:>11}{r['accesses']:>11}"
              f"{r['cpu_s']:>8.2f}{r['wall_s']:>8.2f}{r['ops_per_s'] / 1e6:>8.2f}"
              f"{r['accesses_per_s'] / 1e6:>8.2f}  {note}")  # fmt: skip
        rows.append({"kernel": kernel, "stage": stage, "path": path}
                    | {k: v for k, v in r.items() if k != "report"})  # fmt: skip
        sys.stdout.flush()

    for name in args.kernels.split(","):
        kernel = KERNELS[name]
        base: dict[str, dict[str, Any]] = {}
        if baseline is not None and baseline.has_kernel(name):
            base = baseline.measure(name, args.stages, args.size)
        for stage in args.stages.split(","):
            module, entry, fargs = build(kernel, args.size, stage)
            r = fast_run(module, entry, fargs, machine)
            note = (f"exec {r['exec_s']:.2f}s (numba compiles there), compile "
                    f"{r['compile_s']:.2f}s, loop kernels {r['kernels_ran']}/{r['kernels']} ran, "
                    f"tape {r['report']['tape_bytes'] / 2**20:.1f} MiB")  # fmt: skip
            line(name, stage, f"fast@{args.size}", r, note)
            if baseline is not None:
                b = base.get(stage)
                if b is None:
                    print(f"{name:<12}{stage:<12}base@{args.baseline}: not in that revision")
                elif (b["ops"], b["accesses"]) != (r["ops"], r["accesses"]):
                    line(name, stage, f"base@{args.baseline}", b, "a different workload")
                else:
                    line(name, stage, f"base@{args.baseline}", b,
                         f"this tree is {b['cpu_s'] / r['cpu_s']:.2f}x faster")  # fmt: skip
            if args.sweep:
                from tapeflow.hwmodel.config import load_machine
                from tapeflow.simulate import simulate_fast_many

                sizes = [int(x) for x in args.sweep.split(",")]
                machines = [load_machine(overrides=[f"l2.size={n}"]) for n in sizes]
                _, t_cpu, t_wall = timed(lambda: simulate_fast_many(
                    module, entry, copy.deepcopy(fargs), machines))  # fmt: skip
                sw = {"ops": r["ops"], "accesses": r["accesses"], "cpu_s": t_cpu,
                      "wall_s": t_wall, "ops_per_s": r["ops"] / t_cpu,
                      "accesses_per_s": r["accesses"] / t_cpu}  # fmt: skip
                line(
                    name,
                    stage,
                    f"sweep x{len(sizes)}",
                    sw,
                    f"{len(sizes)} machines from one run ({t_cpu / r['cpu_s']:.1f}x one run)",
                )
            if args.no_model:
                continue
            p = model_prefix(module, entry, fargs, args.model_ops, machine)
            line(name, stage, f"model@{args.size}", p,
                 f"first {args.model_ops} ops only; fast is {r['ops_per_s'] / p['ops_per_s']:.1f}x"
                 " faster per op")  # fmt: skip
            module, entry, fargs = build(kernel, "small", stage)
            f = fast_run(module, entry, fargs, machine)
            m = model_run(module, entry, fargs, machine)
            same = json.dumps(f["report"], sort_keys=True, default=str) == json.dumps(
                m["report"], sort_keys=True, default=str
            )
            line(name, stage, "fast@small", f, "same report" if same else "REPORTS DIFFER")
            line(name, stage, "model@small", m, f"fast is {m['cpu_s'] / f['cpu_s']:.1f}x faster")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": load, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
