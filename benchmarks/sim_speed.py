"""How fast the hardware model simulates: ops and memory accesses per second.

    python benchmarks/sim_speed.py                       # small kernels + a 64K stream
    python benchmarks/sim_speed.py benchmarks/kernels/default/jacobi2d.mlir
    python benchmarks/sim_speed.py --stream 262144 --backend python

For each kernel it runs the function four ways and prints rates:
- `interp`: the plain interpreter (tapeflow.runner, no listener): the floor of `model`;
- `model`: the interpreter with the hardware model listening (the op-by-op reference);
- `fast`: the compiled path (hwmodel.compiled + hwmodel.fastsim) driving the same model,
  checked to give the same report (`fast==`);
- `cache`: the cache simulator alone on the address stream the model recorded.
`--no-model` skips the op-by-op runs (for kernels too large for the interpreter).
Ops are every interpreted op (OpCounter semantics); accesses are core memory accesses
(L1 + scratchpad). Rates are per CPU second of this process (`--wall`: per wall
second). The numba JIT is warmed up before timing (and cached on disk).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from tapeflow.hwmodel.cache import CacheParams, CacheSim
from tapeflow.hwmodel.config import load_machine
from tapeflow.hwmodel.listener import HardwareModel

from tapeflow import runner
from tapeflow.example_ir import stream_kernel

ROOT = Path(__file__).resolve().parent

_clock = time.process_time
"""CPU seconds of this process (the machine is shared: wall time depends on the load);
`--wall` switches to wall-clock time."""


def _inputs(name: str, func_op) -> list:
    """The benchmark's own inputs (benchmarks/kernels make_inputs) for its kernels, else
    tapeflow-run's fill rule."""
    path = Path(name)
    if path.parent.name in ("small", "default") and path.parent.parent == ROOT / "kernels":
        if str(ROOT.parent) not in sys.path:
            sys.path.insert(0, str(ROOT.parent))
        try:
            from tapeflow.eval.bundled import make_inputs

            return list(make_inputs(path.stem, path.parent.name, 0))
        except (ImportError, KeyError):
            pass
    return runner.make_arguments(func_op, seed=0)


class _Recorder(HardwareModel):
    """The model, also keeping every flushed batch (for the cache-only timing)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.batches: list[np.ndarray] = []

    def flush(self) -> None:
        if self._buf:
            self.batches.append(np.array(self._buf, dtype=np.int64))
        super().flush()


def measure(name: str, text: str, backend: str, op_by_op: bool = True,
            entry: str | None = None, scalars: list[str] | None = None) -> dict[str, float]:
    import json

    from tapeflow.simulate import simulate_fast

    module = runner.load_module(text, name)
    func_op = runner.find_function(module, entry)
    entry = func_op.sym_name.data
    args = _inputs(name, func_op) if not scalars else runner.make_arguments(
        func_op, seed=0, scalars=scalars)  # fmt: skip
    machine = load_machine()

    t0 = _clock()
    fast = simulate_fast(module, entry, [a.copy() if hasattr(a, "copy") else a for a in args],
                         machine, backend=backend)  # fmt: skip
    t_fast = _clock() - t0
    fc = fast.model.counts
    out = {"ops": float(sum(fc.ops)), "accesses": float(fc.loads + fc.stores),
           "t_fast": t_fast, "t_interp": 0.0, "t_model": 0.0, "t_cache": 0.0,
           "cache_accesses": 0.0, "same": 1.0}  # fmt: skip
    if not op_by_op:
        return out

    t0 = _clock()
    runner.run_function(module, entry, [a.copy() if hasattr(a, "copy") else a for a in args])
    t_interp = _clock() - t0

    model = _Recorder(machine, backend=backend)
    t0 = _clock()
    run = runner.run_function(module, entry, args, listeners=[model])
    model.finish()
    t_model = _clock() - t0
    from tapeflow.hwmodel.report import build_report

    ref = build_report(model, runner.format_json(run)["results"])
    same = json.dumps(ref, sort_keys=True) == json.dumps(fast.report, sort_keys=True)

    c = model.counts
    n_ops = sum(c.ops)
    n_acc = c.loads + c.stores

    sim = CacheSim(CacheParams.from_machine(machine), backend=backend)
    t0 = _clock()
    for packed in model.batches:
        sim.access_batch(packed >> 17, (packed >> 1) & 0xFFFF, packed & 1)
    t_cache = _clock() - t0
    n_cached = sum(len(b) for b in model.batches)
    assert sim.counters == model.cache.counters
    assert (n_ops, n_acc) == (out["ops"], out["accesses"])
    out.update(t_interp=t_interp, t_model=t_model, t_cache=t_cache,
               cache_accesses=float(n_cached), same=float(same))  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kernels", nargs="*", help=".mlir files (default: the small kernels)")
    p.add_argument("--stream", type=int, default=65536, help="size of the stream kernel")
    p.add_argument("--backend", default="auto", choices=["auto", "numba", "python"])
    p.add_argument("--no-model", action="store_true", help="skip the op-by-op runs")
    p.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    p.add_argument("--entry", help="function to run in every file (default: the only one)")
    p.add_argument("--args", nargs="*", default=[], help="scalar arguments (tapeflow-run)")
    args = p.parse_args(argv)
    global _clock
    if args.wall:
        _clock = time.perf_counter

    # Warm up (JIT / load the cached machine code).
    CacheSim(CacheParams(), backend=args.backend).access_batch([64], [0], [0])

    files = [Path(k) for k in args.kernels] or sorted((ROOT / "kernels" / "small").glob("*.mlir"))
    work = [(str(f.resolve()), f.read_text()) for f in files]
    if args.stream:
        work.append((f"stream{args.stream}", stream_kernel(args.stream, squares=True)))
    print(f"{'kernel':<20}{'ops':>11}{'accesses':>11}{'interp ops/s':>13}"
          f"{'model ops/s':>12}{'model acc/s':>12}{'fast ops/s':>12}{'fast acc/s':>12}"
          f"{'cache acc/s':>13}{'fast==':>7}")  # fmt: skip
    tot = dict.fromkeys(("ops", "accesses", "t_interp", "t_model", "t_cache",
                         "cache_accesses", "t_fast"), 0.0)  # fmt: skip
    tot["same"] = 1.0
    for name, text in work:
        label = Path(name).name if name.endswith(".mlir") else name
        try:
            r = measure(name, text, args.backend, not args.no_model,
                        args.entry if name.endswith(".mlir") else None,
                        args.args if name.endswith(".mlir") else None)  # fmt: skip
        except Exception as e:  # report and go on with the other kernels
            print(f"{label:<20} error: {str(e).splitlines()[0]}")
            continue
        for k in tot:
            tot[k] = min(tot[k], r[k]) if k == "same" else tot[k] + r[k]
        _row(label, r)
    _row("TOTAL", tot)
    return 0


def _rate(n: float, t: float) -> str:
    return f"{n / t:,.0f}" if t > 0 else "-"


def _row(name: str, r: dict[str, float]) -> None:
    print(f"{name:<20}{int(r['ops']):>11}{int(r['accesses']):>11}"
          f"{_rate(r['ops'], r['t_interp']):>13}{_rate(r['ops'], r['t_model']):>12}"
          f"{_rate(r['accesses'], r['t_model']):>12}{_rate(r['ops'], r['t_fast']):>12}"
          f"{_rate(r['accesses'], r['t_fast']):>12}"
          f"{_rate(r['cache_accesses'], r['t_cache']):>13}"
          f"{('yes' if r['same'] else 'NO') if r['t_model'] else '-':>7}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
