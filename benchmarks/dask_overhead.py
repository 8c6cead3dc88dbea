"""CPU that an idle 2-worker Dask LocalCluster takes: Dask's defaults vs `Pool`'s settings.

    python benchmarks/dask_overhead.py [--seconds 30]

Starts a LocalCluster as `tapeflow.eval.pool.Pool` does (2 single-threaded worker processes,
forkserver), once with Dask's default housekeeping and once with `pool.HOUSEKEEPING`,
lets it idle, and prints the CPU seconds the driver (scheduler and nannies) and each
worker used per minute. What a run of `tapeflow-bench` or `tapeflow-sweep` saves is about
that rate times its wall time (the rates are per process, whether tasks run or not; the
workers' stack profiler costs more when a task runs, the task's own CPU is not in these).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tapeflow.eval.pool import HOUSEKEEPING, Pool  # noqa: E402


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def idle_rates(seconds: float, settings: dict[str, object]) -> tuple[float, list[float]]:
    """CPU seconds per minute of (the driver, each worker) while the cluster idles."""
    with Pool(workers=2, dask_config=settings) as pool:
        pool.worker_cpu_s()  # every worker up and answering
        d0, w0 = _cpu_s(), pool.worker_cpu_s() or {}
        time.sleep(seconds)
        d1, w1 = _cpu_s(), pool.worker_cpu_s() or {}
    scale = 60.0 / seconds
    return (d1 - d0) * scale, [(w1[pid] - w0[pid]) * scale for pid in sorted(w0)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    import dask
    import distributed  # noqa: F401  (loads the distributed.* defaults)

    defaults = {key: dask.config.get(key) for key in HOUSEKEEPING}
    print(f"# idle 2-worker LocalCluster, {args.seconds:g} s each; CPU seconds per minute")
    for name, settings in (("Dask defaults", defaults), ("Pool (HOUSEKEEPING)", HOUSEKEEPING)):
        driver, workers = idle_rates(args.seconds, settings)
        total = driver + sum(workers)
        print(f"{name:20} driver {driver:5.2f}  workers "
              + " ".join(f"{w:5.2f}" for w in workers)
              + f"  total {total:5.2f} ({100 * total / 60:.1f}% of one core)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
