"""Real Enzyme beside ours: for every bundled and salam kernel, tape bytes of Enzyme-MLIR vs
our Enzyme layout vs TapeFlow's DRAM tape, cycles of the four variants on both presets,
and native CPU time of Enzyme-MLIR's gradient vs ours.

    python benchmarks/real_enzyme.py                          # small sizes, 3 native rounds
    python benchmarks/real_enzyme.py --kernels gemm,salam/spmv --runs 5 --out section.md

Simulated (the hardware model, as `tapeflow-bench` runs Enzyme-MLIR's variant: each
kernel's four variants once for both presets, on the compiled fast path): `--size small`
by default (`--size default` is the bench's own full run). Enzyme-MLIR's tape = the
buffers it allocates for its caches (and their tables) plus its `enzyme.init` caches at
their peak; ours = the Enzyme layout's arrays; TapeFlow's = its DRAM tape on that preset.
Its gradient is checked against ours as the bench checks it (normwise relative error max
|a - b| / max |b| <= 1e-12 per array; the largest per-entry error beside it).

Native (`--native-size`, default sizes by default): both gradients compiled as
`tapeflow-exec` compiles them (`tapeflow.native.compile_timing`: made and lowered with
`mlir-opt-22` once each, run with `mlir-runner-22 --O3`); `--runs` rounds, alternating
which goes first, each the minimum of `--calls` calls after a warm-up call (in one
process the calls vary by a few percent, so a few rounds suffice); the ratio is
Enzyme-MLIR's minimum over ours (> 1: ours is faster). Making the program and JIT-compiling
its inputs (dense constants) dominate a round, hence few rounds of several calls.

It prints the Markdown section for docs/RESULTS.md (and writes it to `--out`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tapeflow import native  # noqa: E402
from tapeflow.baselines import enzyme_mlir  # noqa: E402
from tapeflow.eval import jobs  # noqa: E402
from tapeflow.eval.kernels import kernel_table  # noqa: E402
from tapeflow.eval.markdown import fmt_bytes, fmt_x  # noqa: E402
from tapeflow.eval.run import run_jobs_shared  # noqa: E402
from tapeflow.eval.summary import ratio, summarize_kernel  # noqa: E402
from tapeflow.hwmodel.config import load_machine  # noqa: E402

VARIANTS = ("enzyme-mlir", "enzyme", "regions", "tapeflow")
NOT_TIMED = {"salam/alexnet": "not timed at its real size: its 58 M-element array would be "
                              "written into the program as a constant"}
"""Kernels left out of the native timings at default sizes (scripts/bench leaves alexnet
out of the bench for its size too)."""


def simulate(table: dict[str, tuple[str, Any, str]], size: str) -> dict[str, dict[str, Any]]:
    """kernel -> preset -> its `KernelRow` (the four variants on that preset)."""
    machines = {label: load_machine(label) for label in jobs.MACHINES}
    out: dict[str, dict[str, Any]] = {}
    for name, (suite, kernel, _) in table.items():
        t = time.perf_counter()
        planned = [
            jobs.Job(kernel=name, variant=v, size=size, machine=m.raw, machine_label=label,
                     file_kernel=kernel if suite != "bundled" else None)
            for label, m in machines.items() for v in VARIANTS
        ]  # fmt: skip
        results = run_jobs_shared(planned)["results"]
        out[name] = {}
        for label, m in machines.items():
            mine = {r["variant"]: r for r in results if r["machine"] == label}
            out[name][label] = summarize_kernel(name, size, mine, m, kernel=kernel)
        print(f"real_enzyme: {name} simulated ({time.perf_counter() - t:.0f} s)",
              file=sys.stderr, flush=True)  # fmt: skip
    return out


def time_native(name: str, kernel: Any, suite: str, size: str, runs: int,
                calls: int) -> dict[str, Any]:  # fmt: skip
    """Min CPU seconds of Enzyme-MLIR's and our Enzyme layout's native gradient."""
    file_kernel = kernel if suite != "bundled" else None
    modules, seconds = {}, {}
    try:
        for v in ("enzyme-mlir", "enzyme"):
            modules[v] = jobs.build_module(jobs.Job(name, v, size, file_kernel=file_kernel))
    except Exception as e:  # Enzyme's refusal: its first line
        return {"error": str(e).splitlines()[0]}
    args = kernel.grad_arguments(size, 0)
    seconds: dict[str, list[float]] = {v: [] for v in modules}
    try:  # each program made and lowered once; every round runs both, in turn first
        timed = {v: native.compile_timing(m, kernel.grad_entry, args, 1 + calls)
                 for v, m in modules.items()}  # fmt: skip
        for r in range(runs):
            for v in (list(timed) if r % 2 == 0 else list(timed)[::-1]):
                times, _ = timed[v]()
                seconds[v].append(min(times[1:]))  # the first call warms the caches
    except Exception as e:
        return {"error": str(e).splitlines()[0]}
    return {f"{v}_min_s": min(s) for v, s in seconds.items()}


def section(rows: dict[str, dict[str, Any]], times: dict[str, dict[str, Any]], size: str,
            native_size: str, runs: int, calls: int, command: str) -> str:  # fmt: skip
    out = ["## Real Enzyme (Enzyme-MLIR) beside our Enzyme layout and TapeFlow", "",
           f"From one run of `{command}`: {size} sizes on the hardware model, "
           f"{native_size} sizes natively ({runs} interleaved rounds, each the minimum of "
           f"{calls} calls). Enzyme-MLIR is enzyme-ad {enzyme_mlir.ENZYME_AD.split('==')[1]} "
           "(`enzyme-autodiff`); tape = the bytes each keeps at its peak (Enzyme-MLIR: its "
           "cache buffers and caches; TapeFlow: its DRAM tape on that preset); cycles on "
           "both presets; gradient = the largest normwise relative error of Enzyme-MLIR's "
           "against ours (max |a - b| / max |b| per array; at most 1e-12 to agree) and the "
           "largest per entry; native = Enzyme-MLIR's CPU time over our Enzyme layout's "
           "(> 1: ours is faster).", "",
           "| kernel | tape Enzyme-MLIR | tape Enzyme layout | tape TapeFlow (CPU / accel) "
           "| cycles CPU: Enzyme-MLIR / Enzyme layout / regions / TapeFlow | cycles accel: "
           "Enzyme-MLIR / Enzyme layout / regions / TapeFlow | gradient | native |",
           "|---|---:|---:|---:|---:|---:|---|---:|"]  # fmt: skip
    for name, by_machine in rows.items():
        cpu, accel = (by_machine[m] for m in jobs.MACHINES)
        b = cpu.baselines.get("enzyme-mlir", {})
        t = times.get(name, {})
        native_cell = (fmt_x(ratio(t["enzyme-mlir_min_s"], t["enzyme_min_s"]), 3)
                       if "enzyme_min_s" in t else "-")  # fmt: skip
        if b.get("refused"):
            message = b["refused"].split(": ", 1)[-1].replace("|", "/")
            message = message.replace(f"{ROOT}/", "")  # the repository's paths, relative
            what = "refused" if "Enzyme-MLIR cannot differentiate" in message else "failed"
            out.append(f"| {name} | - | {fmt_bytes(cpu.tape_bytes)} | - | - | - | {what}: "
                       f"{message}{_bug(b)} | {native_cell} |")  # fmt: skip
            continue

        def cycles(row: Any) -> str:
            return " / ".join(f"{row.variants[v]['cycles']:,.0f}" if v in row.variants else "-"
                              for v in VARIANTS)  # fmt: skip

        tapes = " / ".join(fmt_bytes(r.variants.get("tapeflow", {}).get("tape_bytes"))
                           for r in (cpu, accel))  # fmt: skip
        verdict = "agrees" if b.get("agrees") else "**DIFFERS**"
        err = "-" if b.get("max") is None else f"{b['max']:.2g}; per entry {b['max_entry']:.2g}"
        out.append(f"| {name} | {fmt_bytes(cpu.variants['enzyme-mlir']['tape_bytes'])} | "
                   f"{fmt_bytes(cpu.tape_bytes)} | {tapes} | {cycles(cpu)} | {cycles(accel)} "
                   f"| {verdict} ({err}){_bug(b)} | {native_cell} |")  # fmt: skip
    more = [n for n, r in rows.items() if "enzyme-mlir" in r[jobs.MACHINES[0]].variants
            and r[jobs.MACHINES[0]].tape_bytes
            > r[jobs.MACHINES[0]].variants["enzyme-mlir"]["tape_bytes"]]  # fmt: skip
    out += ["", "Where our Enzyme layout keeps more tape than Enzyme-MLIR: "
            + (", ".join(more) or "nowhere") + ".", ""]
    return "\n".join(out) + "\n"


def _bug(b: dict[str, Any]) -> str:
    """A known bug of Enzyme's behind a row (`enzyme_mlir.KNOWN_BUGS`), named briefly: the
    notes below the table say more."""
    return " (Enzyme-MLIR's bug: test_enzyme_mlir_bugs.py)" if b.get("known_bug") else ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default=None, help="comma-separated (default: every bundled "
                   "and salam kernel)")  # fmt: skip
    p.add_argument("--size", default="small", choices=("small", "default"),
                   help="the simulated runs' size (small)")
    p.add_argument("--native-size", default="default", choices=("small", "default"),
                   help="the native timings' size (default)")
    p.add_argument("--runs", type=int, default=3, help="native rounds (3)")
    p.add_argument("--calls", type=int, default=5, help="native calls per round (5)")
    p.add_argument("--no-native", action="store_true", help="skip the native timings")
    p.add_argument("--out", help="also write the Markdown section to this file")
    a = p.parse_args(argv)
    if not enzyme_mlir.available():
        print(f"error: {enzyme_mlir.MISSING}", file=sys.stderr)
        return 1
    table = kernel_table(None, "bundled,salam", (), a.size)
    if a.kernels:
        names = [k for k in a.kernels.split(",") if k]
        unknown = [k for k in names if k not in table]
        if unknown:
            print(f"error: unknown kernel(s) {', '.join(unknown)} (known: {', '.join(table)})",
                  file=sys.stderr)  # fmt: skip
            return 1
        table = {k: table[k] for k in names}
    rows = simulate(table, a.size)
    times: dict[str, dict[str, Any]] = {}
    if not a.no_native:
        native.find_tools()
        for name, (suite, kernel, _) in table.items():
            if a.native_size == "default" and name in NOT_TIMED:
                times[name] = {"error": NOT_TIMED[name]}
                continue
            times[name] = time_native(name, kernel, suite, a.native_size, a.runs, a.calls)
            print(f"real_enzyme: {name} timed natively: {times[name]}", file=sys.stderr,
                  flush=True)  # fmt: skip
    command = "python benchmarks/real_enzyme.py" + ("" if argv is None and len(sys.argv) < 2
                                                    else " " + " ".join(argv or sys.argv[1:]))
    text = section(rows, times, a.size, a.native_size, a.runs, a.calls, command)
    print(text)
    if a.out:
        Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
