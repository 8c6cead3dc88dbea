"""Where `tapeflow-bench`'s time goes: per kernel and simulation run, in one process.

    python benchmarks/bench_time.py [tapeflow-bench arguments, e.g. --quick --kernels gemm]

Builds exactly the jobs `tapeflow-bench` would for the same arguments (`plan`), runs each
kernel's task as the bench does (`run_jobs_shared`: one compile per pipeline, one run per
distinct program for every machine), then runs each program once more with ONE machine.
Printed per run: the CPU seconds of the pipeline compiles, the code generation of the
fast path (wall seconds, single-threaded), the CPU seconds of the run with its N machines
and with one, and from the two: one machine's hardware model (cache simulation, phases,
report: (run_N - run_1) / (N - 1)) and the program's execution (run_1 minus one model). The totals say which part
a faster bench has to shrink: execution (hwmodel/compiled/) or the models
(hwmodel/cache.py, listener.py, timing/, fastsim.py). Takes about twice the bench's CPU time.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tapeflow.eval.jobs import Job, spm_job  # noqa: E402
from tapeflow.eval.run import job_name, kernel_tasks, run_jobs_shared  # noqa: E402
from tapeflow.tools.bench import plan  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    _, size, names, setups, jobs = plan(sys.argv[1:] if argv is None else argv)
    print(f"# size = {size}; machines: {', '.join(label for label, *_ in setups)}; "
          f"{len(jobs)} jobs in {len(names)} tasks")  # fmt: skip
    t0 = time.perf_counter()  # imports, numba's compilation of the cache kernels
    run_jobs_shared([Job("pairwise", "enzyme", size="small", sweep=(65536,))])
    print(f"# warm-up (imports, JIT compilation; once per bench worker): "
          f"{time.perf_counter() - t0:.1f} s")  # fmt: skip
    print(f"{'kernel':12} {'run (machine/variant...)':44} {'N':>3} {'compile':>8} "
          f"{'codegen':>8} {'run N':>8} {'run 1':>8} {'model':>7} {'execute':>8}")  # fmt: skip
    totals = dict.fromkeys(("task", "compile", "codegen", "execute", "models"), 0.0)
    for task in kernel_tasks(jobs):
        shared = run_jobs_shared(task)
        totals["task"] += shared["cpu_s"]
        totals["compile"] += shared["compile_cpu_s"]
        points = [spm_job(j, c) for j in task for c in j.spm_sweep]  # scratchpad sweeps
        by_name = {job_name(j): j for j in (*task, *points)}
        for r in shared["runs"]:
            first = by_name[r["jobs"][0]]
            one = run_jobs_shared([dataclasses.replace(first, sweep=(), spm_sweep=())])
            one = one["runs"][0]
            n = r["machines"]
            model = (r["run_cpu_s"] - one["run_cpu_s"]) / (n - 1) if n > 1 else float("nan")
            execute = one["run_cpu_s"] - (model if n > 1 else 0.0)
            totals["codegen"] += r["codegen_s"]
            totals["execute"] += execute
            totals["models"] += r["run_cpu_s"] - execute
            jobs_text = " ".join(r["jobs"])
            if len(jobs_text) > 44:
                jobs_text = jobs_text[:41] + "..."
            print(f"{first.kernel:12} {jobs_text:44} {n:3d} {'':>8} {r['codegen_s']:8.2f} "
                  f"{r['run_cpu_s']:8.2f} {one['run_cpu_s']:8.2f} {model:7.2f} {execute:8.2f}")
        print(f"{task[0].kernel:12} {'(task: compile of every pipeline, CPU)':44} "
              f"{'':>3} {shared['compile_cpu_s']:8.2f} {'':>8} {shared['cpu_s']:8.2f}")
    print()
    whole = totals["task"]
    print(f"# the bench's tasks, in one process: {whole:.1f} CPU s")
    for key in ("compile", "codegen", "execute", "models"):
        print(f"#   {key:8} {totals[key]:8.1f} s  {100 * totals[key] / whole:5.1f} %")
    rest = whole - sum(totals[k] for k in ("compile", "codegen", "execute", "models"))
    print(f"#   {'other':8} {rest:8.1f} s  {100 * rest / whole:5.1f} %  (inputs, imports, "
          "machines, results)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
