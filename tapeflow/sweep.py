"""Design-space sweeps: a grid of (kernel, machine, pass options) points on Dask distributed.

A sweep spec (TOML, see `SPEC_DOC`) names the axes; every point is the three variants of
`tapeflow.bench` (Enzyme layout, regions only, TapeFlow) compiled and simulated, plus a
fourth, `checkpoint` (TapeFlow with `tapeflow-checkpoint`), when the spec sweeps
`snapshots`. The work is split so that nothing is done twice:

- compile: one task per (kernel source, pipeline) -- the Enzyme and regions-only IR do not
  depend on the pass options, TapeFlow's IR not on the machine -- cached on disk under
  `OUT/cache/ir/` by a hash of (code, kernel source, pipeline);
- simulate: one task per IR and group of machines (`simulate_fast_many`: one run of the
  program feeds every machine's hardware model), each result cached under
  `OUT/cache/sim/` by a hash of (code, IR, machine, inputs), so a rerun with one more
  machine value only simulates the new points.

Rows (one per point and variant: the point's axes, every report field as `report.*`, and
ratios to the Enzyme layout of the same point) go to Parquet part files under
`OUT/parts/` as points finish; at the end they are merged into `OUT/results.parquet`. An
interrupted sweep resumes: points whose rows are already there (without an error) are
skipped.

`Pool` is where tasks run: in this process (one worker), on a `LocalCluster` (more), or
on an existing scheduler. `tapeflow-bench` runs its jobs through the same `Pool`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
import tomllib
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tapeflow.diagnostics import ToolError

LAYER_OPTIONS = ("spm-bytes", "tile-bytes", "depth")
"""The TapeFlow pipeline's layer options (`tapeflow{spm-bytes tile-bytes depth}`): columns
of every point."""
CHECKPOINT_OPTIONS = ("snapshots", "schedule")
"""Its `checkpoint=SCHEDULE-SNAPSHOTS` option, as two axes: columns only of a spec that
sweeps `snapshots`, which adds the variant `checkpoint` (TapeFlow's pipeline with it)."""
PASS_OPTIONS = LAYER_OPTIONS + CHECKPOINT_OPTIONS
"""What a spec's `[pass]` table may sweep."""
CHECKPOINT_LABEL = "TapeFlow with checkpointing"
"""The variant `checkpoint`'s name in plots (beside `tapeflow.bench.LABELS`)."""
SPEC_KEYS = ("kernels", "sizes", "machines", "seed", "variants", "backend", "pass", "set",
             "plot")  # fmt: skip
MACHINES_PER_TASK = 8
"""At most this many machines share one simulation run (and one task)."""
FLUSH_ROWS = 48
HOUSEKEEPING = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing-interval": "1s",
}
"""Dask settings of the LocalCluster that `Pool` starts: background work at rates for
long tasks (benchmarks/dask_overhead.py measures the CPU it takes)."""
FLUSH_SECONDS = 5.0
RESULTS = "results.parquet"

SPEC_DOC = """\
spec (TOML; every axis takes one value or a list, the grid is their product):
  kernels  = ["gemm", "lstm"]        benchmark kernels (required)
  sizes    = ["small"]               kernel sizes: small, default (default: default)
  machines = ["default-45nm", "accel-salam", "my.toml"]
                                     machine presets (tapeflow-bench --machine NAME) or
                                     TOML files relative to the spec (default:
                                     default-45nm, hwmodel/defaults.toml)
  seed     = 0                       seed of the kernels' inputs
  variants = ["enzyme", "tapeflow"]  rows per point (default: all three, and checkpoint
                                     when snapshots is swept)
  backend  = "auto"                  cache simulator backend
  [pass]                             TapeFlow pipeline options
  spm-bytes = [8192, 32768]          (default: the machine's spm.size)
  tile-bytes = 0
  depth = [2, 3]
  snapshots = [4, 8, 16]             adds the variant checkpoint: TapeFlow with
  schedule = "binomial"              tapeflow{checkpoint=SCHEDULE-SNAPSHOTS} (binomial or
                                     periodic; default binomial)
  [set]                              machine keys, as tapeflow-bench --set
  "l2.size" = [262144, 1048576]
  [plot]
  heatmap = ["l2.size", "spm-bytes"] the two axes of the heatmaps"""


# ------------------------------------------------------------------------------------------
# Where tasks run


class _InlineFuture:
    """A task run in this process when its result is first asked for."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]):
        self._fn, self._args = fn, args
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None

    def result(self) -> Any:
        if not self._done:
            try:
                self._value = self._fn(*self._args)
            except Exception as e:
                self._error = e
            self._done = True
        if self._error is not None:
            raise self._error
        return self._value


class _InlineCompleted:
    """`distributed.as_completed` for inline futures: runs them in the order added."""

    def __init__(self) -> None:
        self._queue: deque[_InlineFuture] = deque()

    def add(self, future: _InlineFuture) -> None:
        self._queue.append(future)

    def __iter__(self) -> Iterator[_InlineFuture]:
        while self._queue:
            future = self._queue.popleft()
            try:
                future.result()
            except Exception:
                pass  # raised again by the caller's `result()`
            yield future


class Pool:
    """Where tasks run: this process (`workers` <= 1, no scheduler), a Dask `LocalCluster`
    of `workers` single-threaded processes, or the Dask scheduler at `scheduler`."""

    def __init__(self, workers: int = 1, scheduler: str | None = None,
                 memory_limit: str | None = None,
                 dask_config: dict[str, Any] | None = None) -> None:  # fmt: skip
        """`dask_config`: Dask settings for the LocalCluster over `HOUSEKEEPING`'s."""
        self.workers = workers
        self.dask_config = dask_config or {}
        self.scheduler = scheduler
        self.memory_limit = memory_limit
        self.client: Any = None
        self._cluster: Any = None
        self._config: Any = None

    def __enter__(self) -> Pool:
        if self.scheduler is None and self.workers <= 1:
            return self
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ToolError("more than one worker needs Dask distributed: "
                            "pip install -e '.[sweep]' (or run with one worker)") from None

        if self.scheduler is not None:
            try:
                self.client = Client(self.scheduler, timeout="15s")
            except (OSError, TimeoutError) as e:
                raise ToolError(f"cannot reach the Dask scheduler at {self.scheduler}: "
                                f"{e}") from None  # fmt: skip
        else:
            import dask

            # forkserver children end with os._exit: a worker that ran numba-compiled code
            # takes seconds to finalise a spawned interpreter (the nanny then kills it).
            # One task per worker at a time (saturation 1.0, not 2 of 1.1): the queue stays
            # on the scheduler, so a worker that frees up takes the next task by priority
            # (longest first) instead of one queued behind another's long task.
            # Housekeeping at Dask's default rates (the workers' stack profiler every 10 ms,
            # event-loop ticks every 20 ms, memory checks every 100 ms...) took about 9% of
            # one core on this machine, idle or not; tasks here last seconds to minutes.
            self._config = dask.config.set({
                "distributed.worker.multiprocessing-method": "forkserver",
                "distributed.scheduler.worker-saturation": 1.0,
                **HOUSEKEEPING,
                **self.dask_config,
            })  # fmt: skip
            self._cluster = LocalCluster(  # dashboard on a free port: never a clash
                n_workers=self.workers, threads_per_worker=1, processes=True,
                dashboard_address=":0", memory_limit=self.memory_limit or "auto",
            )  # fmt: skip
            self.client = Client(self._cluster)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        if self._config is not None:
            self._config.__exit__(None, None, None)
        self.client = self._cluster = self._config = None

    def worker_cpu_s(self) -> dict[int, float] | None:
        """CPU seconds (user + system) of each worker process so far, by pid: everything
        it did, imports and Dask included. None when tasks run in this process."""
        if self.client is None:
            return None
        return {pid: cpu for pid, cpu in self.client.run(_process_cpu_s).values()}

    @property
    def distributed(self) -> bool:
        return self.client is not None

    def submit(self, fn: Callable[..., Any], *args: Any, key: str | None = None,
               priority: int = 0) -> Any:  # fmt: skip
        if self.client is None:
            return _InlineFuture(fn, args)
        if key is None:
            return self.client.submit(fn, *args, pure=False, priority=priority)
        return self.client.submit(fn, *args, key=key, priority=priority)

    def as_completed(self) -> Any:
        """An iterator over finished futures that accepts more futures (`add`) meanwhile."""
        if self.client is None:
            return _InlineCompleted()
        from dask.distributed import as_completed

        return as_completed()


def _process_cpu_s() -> tuple[int, float]:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return os.getpid(), r.ru_utime + r.ru_stime


def run_unordered(pool: Pool, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    """`fn(item)` for every item on `pool`, yielded as they finish (first items first)."""
    done = pool.as_completed()
    for i, item in enumerate(items):
        done.add(pool.submit(fn, item, priority=len(items) - i))
    for future in done:
        yield future.result()


# ------------------------------------------------------------------------------------------
# The spec


@dataclass
class Point:
    """One grid point: its axis values (`columns`) and what they resolve to."""

    columns: dict[str, Any]
    kernel: str
    size: str
    seed: int
    machine: dict[str, Any]
    """The merged, validated machine table (`Machine.raw`)."""
    spm_bytes: int
    tile_bytes: int
    depth: int
    snapshots: int = 0
    """Checkpoint snapshots of the `checkpoint` variant (0: the spec sweeps none)."""
    schedule: str = ""
    machine_file: str = ""
    """The machine as named (a preset, or a TOML file's path), and its `[set]` overrides:
    TapeFlow's cost model decides for them."""
    overrides: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return _digest(json.dumps(self.columns, sort_keys=True))[:20]


@dataclass
class Spec:
    path: str
    points: list[Point]
    variants: tuple[str, ...]
    backend: str
    axes: list[str]
    """Every column that names an axis, in spec order."""
    heatmap: list[str] = field(default_factory=list)


class SpecError(ToolError):
    """A spec that cannot be run; the message starts with `spec.toml[:line:col]: `."""


def _locate(text: str, table: str, key: str | None) -> str:
    """`:line:col` of `key` in `[table]` ('' = top level) of a TOML text, or ''."""
    current = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([^\[\]]+?)\s*\]", stripped)
        if header:
            current = header.group(1).replace('"', "")
            if key is None and current == table:
                return f":{number}:1"
            continue
        m = re.match(r'\s*"?([^"=\s]+)"?\s*=', line)
        if m is None or key is None:
            continue
        name = m.group(1)
        if current != table and current.startswith(table + ".") and table:
            name, current_table = current[len(table) + 1 :] + "." + name, table
        else:
            current_table = current
        if current_table == table and name == key:
            return f":{number}:{len(line) - len(line.lstrip()) + 1}"
    return ""


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def load_spec(path: str | Path) -> Spec:
    """Parses and checks a sweep spec; every machine of the grid is loaded and validated
    here, so a bad value fails before anything runs."""
    from tapeflow import bench
    from tapeflow.hwmodel.config import DEFAULT_MACHINE, load_machine
    from tapeflow.transforms import checkpoint
    from tapeflow.transforms.options import check_options

    where = str(path)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise SpecError(f"{where}: cannot read the spec: {e.strerror}") from None
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        loc = f":{m.group(1)}:{m.group(2)}" if m else ""
        raise SpecError(f"{where}{loc}: invalid TOML: {str(e).split(' (at')[0]}") from None

    def fail(message: str, table: str = "", key: str | None = None) -> SpecError:
        return SpecError(f"{where}{_locate(text, table, key)}: {message}")

    for key in spec:
        if key not in SPEC_KEYS:
            raise fail(f"unknown key '{key}' (known: {', '.join(SPEC_KEYS)})", "", key)
    for key in ("pass", "set", "plot"):
        if not isinstance(spec.get(key, {}), dict):
            raise fail(f"'{key}' must be a table ([{key}])", "", key)

    def strings(key: str, default: list[str], known: Sequence[str] | None) -> list[str]:
        values = _values(spec.get(key, default))
        if not values or not all(isinstance(v, str) for v in values):
            raise fail(f"'{key}' must be a string or a non-empty list of strings", "", key)
        bad = [v for v in values if known is not None and v not in known]
        if bad:
            raise fail(f"unknown {key[:-1] if key.endswith('s') else key} "
                       f"{', '.join(repr(v) for v in bad)} (known: {', '.join(known or ())})",
                       "", key)  # fmt: skip
        return list(dict.fromkeys(values))

    if "kernels" not in spec:
        raise fail("missing key 'kernels' (a list of benchmark kernels)")
    kernels = strings("kernels", [], list(bench.kernels()))
    sizes = strings("sizes", ["default"], ["small", "default"])
    machines = strings("machines", [DEFAULT_MACHINE], None)
    checkpointing = "snapshots" in spec.get("pass", {})
    every_variant = [*bench.VARIANTS, "checkpoint"]
    variants = strings("variants", every_variant if checkpointing else list(bench.VARIANTS),
                       every_variant)  # fmt: skip
    if "checkpoint" in variants and not checkpointing:
        raise fail("variant 'checkpoint' needs a snapshots axis ([pass] snapshots = ...)",
                   "", "variants")  # fmt: skip
    backend = spec.get("backend", "auto")
    if backend not in ("auto", "numba", "python"):
        raise fail("'backend' must be one of auto, numba, python", "", "backend")
    seeds = _values(spec.get("seed", 0))
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                            for s in seeds):  # fmt: skip
        raise fail("'seed' must be a whole number >= 0 or a list of them", "", "seed")

    passes = spec.get("pass", {})
    for key, value in passes.items():
        if key not in PASS_OPTIONS:
            raise fail(f"unknown pass option '{key}' (known: {', '.join(PASS_OPTIONS)})",
                       "pass", key)  # fmt: skip
        values = _values(value)
        if key == "schedule":
            if not values or not all(v in checkpoint.SCHEDULES for v in values):
                known = ", ".join(checkpoint.SCHEDULES)
                raise fail(f"pass option 'schedule' must be one of {known} or a list of them",
                           "pass", key)  # fmt: skip
            if not checkpointing:
                raise fail("pass option 'schedule' needs a snapshots axis", "pass", key)
            continue
        if not values or not all(isinstance(v, int) and not isinstance(v, bool)
                                 for v in values):  # fmt: skip
            raise fail(f"pass option '{key}' must be an integer or a list of integers",
                       "pass", key)  # fmt: skip
        for v in values:
            try:
                if key == "snapshots":
                    checkpoint.check_options("tapeflow", "binomial", v)
                else:
                    check_options("tapeflow", **{key.replace("-", "_"):
                                                 (v, 0 if key == "tile-bytes" else 1)})  # fmt: skip
            except Exception as e:
                raise fail(str(e), "pass", key) from None
    sets = _flatten(spec.get("set", {}))
    for key, value in sets.items():
        if not _values(value):
            raise fail(f"machine key '{key}' has an empty list of values", "set", key)

    base = Path(path).resolve().parent
    set_keys = list(sets)
    pass_keys = list(passes)
    if checkpointing and "schedule" not in passes:
        passes, pass_keys = {**passes, "schedule": "binomial"}, [*pass_keys, "schedule"]
    machine_cache: dict[tuple[Any, ...], dict[str, Any]] = {}
    points: list[Point] = []
    grid = itertools.product(
        kernels, sizes, machines, seeds,
        itertools.product(*(_values(sets[k]) for k in set_keys)),
        itertools.product(*(_values(passes[k]) for k in pass_keys)),
    )  # fmt: skip
    for kernel, size, machine, seed, set_values, pass_values in grid:
        mkey = (machine, json.dumps(set_values))
        overrides = tuple(f"{k}={json.dumps(v)}" for k, v in zip(set_keys, set_values,
                                                                  strict=True))  # fmt: skip
        if mkey not in machine_cache:
            try:
                for assignment in overrides:  # the cost model is given them too
                    bench.set_text(assignment)
                machine_cache[mkey] = load_machine(_machine_file(machine, base), overrides).raw
            except ToolError as e:
                bad = next((k for k in set_keys if f"'{k}'" in str(e)), None)
                table, key = ("set", bad) if bad else ("", "machines")
                raise fail(f"machine {machine!r}"
                           + "".join(f", {k}={v!r}" for k, v in zip(set_keys, set_values,
                                                                  strict=True))  # fmt: skip
                           + f": {e}", table, key) from None
        raw = machine_cache[mkey]
        options = dict(zip(pass_keys, pass_values, strict=True))
        spm = options.get("spm-bytes", int(raw["spm"]["size"]))
        if spm > raw["spm"]["size"]:
            raise fail(f"spm-bytes {spm} exceeds the spm.size {raw['spm']['size']} of machine "
                       f"{machine!r}", "pass", "spm-bytes")  # fmt: skip
        tile = options.get("tile-bytes", 0)
        depth = options.get("depth", 2)
        columns = {"kernel": kernel, "size": size, "machine": machine, "seed": seed,
                   **dict(zip(set_keys, set_values, strict=True)),
                   "spm-bytes": spm, "tile-bytes": tile, "depth": depth}  # fmt: skip
        ckpt = {k: options[k] for k in CHECKPOINT_OPTIONS if checkpointing}
        points.append(Point({**columns, **ckpt}, kernel, size, seed, raw, spm, tile, depth,
                            ckpt.get("snapshots", 0), ckpt.get("schedule", ""),
                            _machine_file(machine, base), overrides))  # fmt: skip

    axes = ["kernel", "size", "machine", "seed", *set_keys, *LAYER_OPTIONS,
            *(CHECKPOINT_OPTIONS if checkpointing else ())]  # fmt: skip
    heatmap = _values(spec.get("plot", {}).get("heatmap", []))
    for key in spec.get("plot", {}):
        if key != "heatmap":
            raise fail(f"unknown plot key '{key}' (known: heatmap)", "plot", key)
    if heatmap and (len(heatmap) != 2 or any(a not in axes for a in heatmap)):
        raise fail(f"plot.heatmap must name two axes of the grid (axes: {', '.join(axes)})",
                   "plot", "heatmap")  # fmt: skip
    return Spec(where, points, tuple(variants), backend, axes, heatmap)


def _machine_file(name: str, base: Path) -> str:
    """A machine TOML file relative to the spec, or a preset name as given."""
    if name.endswith(".toml") or "/" in name:
        return str(base / name)
    return name


# ------------------------------------------------------------------------------------------
# Tasks (run on the workers)


def _digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()


def code_fingerprint() -> str:
    """A hash of TapeFlow's own sources (compiler, model, kernels' inputs): a cached IR or
    simulation is only reused by the code that made it."""
    import tapeflow
    import tapeflow.dialects
    import tapeflow.hwmodel
    import tapeflow.transforms
    from tapeflow.bundled_kernels import kernel_dir

    roots = [Path(m.__file__).parent for m in (tapeflow, tapeflow.dialects, tapeflow.hwmodel,
                                              tapeflow.transforms)]  # fmt: skip
    roots.append(kernel_dir())
    h = hashlib.sha256()
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.suffix in (".py", ".toml") and p.is_file():
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def pipeline_of(variant: str, point: Point) -> str:
    """The `tapeflow-opt -p` pipeline of one variant at one point: `bench.pipeline_spec`'s
    (TapeFlow's cost model deciding for the point's machine), and for `checkpoint`
    TapeFlow's with `checkpoint=SCHEDULE-SNAPSHOTS` added."""
    from tapeflow import bench

    tapeflow = variant if variant != "checkpoint" else "tapeflow"
    spec = bench.pipeline_spec(tapeflow, point.spm_bytes, point.tile_bytes, point.depth,
                               machine=point.machine_file, sets=point.overrides)  # fmt: skip
    if variant != "checkpoint":
        return spec
    assert spec.endswith("}"), spec  # tapeflow{...}: one more option
    return f"{spec[:-1]} checkpoint={point.schedule}-{point.snapshots}}}"


def compile_task(kernel: str, size: str, pipeline: str) -> dict[str, Any]:
    """The IR text of one kernel compiled by one pipeline (never raises: errors come back)."""
    import io

    from xdsl.passes import PassPipeline
    from xdsl.printer import Printer

    from tapeflow import bench
    from tapeflow.registry import get_all_passes, make_context

    try:
        module = bench.kernels()[kernel].load(size)
        PassPipeline.parse_spec(get_all_passes(), pipeline).apply(make_context(), module)
        module.verify()
    except Exception as e:
        return {"ir": None, "error": f"{type(e).__name__}: {e}".strip()}
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return {"ir": out.getvalue() + "\n", "error": None}


def flatten_report(report: dict[str, Any]) -> dict[str, Any]:
    """`report.a.b` columns; lists become JSON text."""
    return {f"report.{k}": json.dumps(v) if isinstance(v, list) else v
            for k, v in _flatten(report).items()}  # fmt: skip


def gradients_digest(grads: dict[str, Any]) -> str:
    """sha256 over every argument after the run (name, dtype, shape, bytes)."""
    import numpy as np

    parts: list[str | bytes] = []
    for name in sorted(grads):
        a = np.ascontiguousarray(grads[name])
        parts += [name, str(a.dtype), str(a.shape), a.tobytes()]
    return _digest(*parts)


def simulate_task(ir: str, kernel: str, size: str, seed: int, machines: list[dict[str, Any]],
                  backend: str) -> list[dict[str, Any]]:  # fmt: skip
    """One result per machine (report, gradients digest, path or error), from one run of
    the program when the machines allow it, else one run each."""
    from tapeflow import bench, runner

    t0 = time.perf_counter()
    try:
        module = runner.load_module(ir, f"{kernel}.mlir")
    except Exception as e:
        return [{"error": f"{type(e).__name__}: {e}".strip()} for _ in machines]
    entry = bench.kernels()[kernel].grad_entry

    def run(raws: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sims, path = bench._simulate_many(
            module, entry, lambda: bench.kernel_arguments(kernel, size, seed),
            [bench.machine_from_raw(r) for r in raws], backend,
        )  # fmt: skip
        names = bench._argument_names(kernel)
        out = []
        for sim in sims:
            grads = {names[p]: sim.run.arguments[p] for p in sim.run.memref_positions}
            grads.update({f"result{i}": r for i, r in enumerate(sim.run.results)})
            out.append({"report": flatten_report(sim.report), "path": path,
                        "grads_sha256": gradients_digest(grads), "error": None})  # fmt: skip
        return out

    try:
        results = run(machines)
    except Exception as e:
        if len(machines) == 1:
            results = [{"error": f"{type(e).__name__}: {e}".strip()}]
        else:  # one machine may reject what the others accept (e.g. scratchpad size)
            results = [r for m in machines for r in simulate_task(ir, kernel, size, seed, [m],
                                                                  backend)]  # fmt: skip
    for r in results:
        r["task_s"] = time.perf_counter() - t0
    return results


# ------------------------------------------------------------------------------------------
# Results on disk


def _atomic_write(path: Path, data: bytes | str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(data, str):
        tmp.write_text(data)
    else:
        tmp.write_bytes(data)
    os.replace(tmp, path)


def _part_files(out_dir: Path) -> list[Path]:
    return sorted((out_dir / "parts").glob("part-*.parquet"))


def read_results(out_dir: str | Path) -> Any:
    """Every row of `OUT/results.parquet` and of the part files not merged yet, one per
    (point, variant): the latest wins. A `pyarrow.Table` (None when there is none)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out_dir = Path(out_dir)
    files = [out_dir / RESULTS] if (out_dir / RESULTS).is_file() else []
    tables = [pq.read_table(f) for f in files + _part_files(out_dir)]
    if not tables:
        return None
    table = pa.concat_tables(tables, promote_options="permissive")
    keys = list(zip(table.column("point_id").to_pylist(), table.column("variant").to_pylist(),
                    strict=True))  # fmt: skip
    last = {k: i for i, k in enumerate(keys)}
    keep = sorted(last.values())
    return table.take(keep) if len(keep) != len(keys) else table


def _write_part(out_dir: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        return
    (out_dir / "parts").mkdir(parents=True, exist_ok=True)
    path = out_dir / "parts" / f"part-{time.time_ns():020d}-{os.getpid()}.parquet"
    tmp = path.with_name("." + path.name + ".tmp")
    columns = list(dict.fromkeys(k for row in rows for k in row))  # reports differ in keys
    pq.write_table(pa.Table.from_pylist([{k: row.get(k) for k in columns} for row in rows]),
                   tmp)  # fmt: skip
    os.replace(tmp, path)


def _merge_parts(out_dir: Path) -> Any:
    """Folds the part files into `results.parquet` (atomically), then removes them."""
    import pyarrow.parquet as pq

    parts = _part_files(out_dir)
    table = read_results(out_dir)
    if table is None:
        return None
    order = sorted(range(table.num_rows), key=lambda i: (
        table.column("kernel")[i].as_py(), table.column("point_id")[i].as_py(),
        table.column("variant")[i].as_py()))  # fmt: skip
    table = with_iso_sram(table.take(order))
    tmp = out_dir / f".{RESULTS}.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, out_dir / RESULTS)
    for p in parts:
        p.unlink(missing_ok=True)
    return table


def grid_axes(columns: Sequence[str]) -> list[str]:
    """The axis columns of a results table: kernel, size, machine, seed, machine keys
    (`l2.size`...) and pass options."""
    return [c for c in columns if c in ("kernel", "size", "machine", "seed")
            or c in PASS_OPTIONS or (not c.startswith("report.") and "." in c)]  # fmt: skip


def with_iso_sram(table: Any) -> Any:
    """`table` with `speedup_iso_sram` on TapeFlow rows: the Enzyme layout's cycles at the
    smallest on-chip SRAM (`sram_bytes`, whole chip) >= TapeFlow's, among the Enzyme rows
    that differ from it only in `l2.size` and the pass options, over TapeFlow's cycles
    (None when no such row: sweep `l2.size` to get it)."""
    import pyarrow as pa

    rows = table.to_pylist()
    if not rows or "sram_bytes" not in table.column_names:
        return table
    fixed = [a for a in grid_axes(table.column_names) if a != "l2.size" and a not in PASS_OPTIONS]
    enzyme: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if r["variant"] == "enzyme" and not r.get("error") and r.get("sram_bytes") is not None:
            key = json.dumps([r.get(a) for a in fixed])
            enzyme[key].append((r["sram_bytes"], r["report.cycles"]))
    from tapeflow.bench import _ratio

    values: list[float | None] = []
    for r in rows:
        more = [] if r["variant"] != "tapeflow" or r.get("error") or r.get("sram_bytes") is None \
            else [p for p in enzyme[json.dumps([r.get(a) for a in fixed])]
                  if p[0] >= r["sram_bytes"]]  # fmt: skip
        values.append(_ratio(min(more)[1], r["report.cycles"]) if more else None)
    if "speedup_iso_sram" in table.column_names:
        table = table.drop_columns(["speedup_iso_sram"])
    return table.append_column("speedup_iso_sram", pa.array(values, pa.float64()))


# ------------------------------------------------------------------------------------------
# The driver


@dataclass
class SweepStats:
    """What a run did; simulations count distinct (IR, machine, inputs) keys."""

    points: int = 0
    points_skipped: int = 0
    compiles_run: int = 0
    compiles_cached: int = 0
    simulations_run: int = 0
    simulations_cached: int = 0
    tasks: int = 0
    rows: int = 0
    errors: int = 0
    wall_s: float = 0.0


def _rows_for(point: Point, variants: Sequence[str], results: dict[str, dict[str, Any]],
              specs: dict[str, str]) -> list[dict[str, Any]]:  # fmt: skip
    """The point's rows: axes, identity, every report field, ratios to the Enzyme layout
    (and, on checkpoint rows, to TapeFlow)."""
    from tapeflow.bench import _ratio

    def report_of(variant: str) -> dict[str, Any] | None:
        r = results.get(variant)
        return r.get("report") if r and not r.get("error") else None

    base = results.get("enzyme")
    base_rep = report_of("enzyme")
    tf_rep = report_of("tapeflow")
    rows = []
    for v in variants:
        r = results[v]
        rep = r.get("report") or {}
        row: dict[str, Any] = {"point_id": point.id, **point.columns, "variant": v,
                               "pipeline": specs[v], "error": r.get("error"),
                               "path": r.get("path"), "ir_sha256": r.get("ir_sha256"),
                               "sim_key": r.get("sim_key"),
                               "grads_sha256": r.get("grads_sha256")}  # fmt: skip
        if rep:  # the whole chip: L1 + L2 + the scratchpad's capacity when it is used
            row["sram_bytes"] = rep["report.sram.on_chip_bytes"]
            row["dram_footprint_bytes"] = footprint(rep)
        if rep and base_rep:
            row["speedup"] = _ratio(base_rep["report.cycles"], rep["report.cycles"])
            for name in ("on_chip_pj", "total_pj"):
                key = f"report.energy.{name}"
                row[f"energy_ratio_{name[:-3]}"] = _ratio(base_rep[key], rep[key])
            row["grads_identical"] = r.get("grads_sha256") == base.get("grads_sha256")
        if rep and tf_rep and v == "checkpoint":
            row["cycles_vs_tapeflow"] = _ratio(rep["report.cycles"], tf_rep["report.cycles"])
            row["footprint_reduction"] = _ratio(footprint(tf_rep), footprint(rep))
        row.update(rep)
        rows.append(row)
    return rows


def footprint(rep: dict[str, Any]) -> int:
    """The gradient's DRAM footprint beyond the program's arrays, from `report.*` columns:
    tape (`tape_bytes`, peak live) + checkpoint snapshots (`snapshot_bytes`)."""
    return rep["report.tape_bytes"] + (rep.get("report.snapshot_bytes") or 0)


class _Cache:
    """IR texts and simulation results on disk, keyed by hash."""

    def __init__(self, root: Path):
        self.root = root

    def _path(self, kind: str, key: str, ext: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.{ext}"

    def get_ir(self, key: str) -> str | None:
        p = self._path("ir", key, "mlir")
        return p.read_text() if p.is_file() else None

    def put_ir(self, key: str, text: str) -> None:
        p = self._path("ir", key, "mlir")
        p.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(p, text)

    def get_sim(self, key: str) -> dict[str, Any] | None:
        p = self._path("sim", key, "json")
        return json.loads(p.read_text()) if p.is_file() else None

    def put_sim(self, key: str, result: dict[str, Any]) -> None:
        p = self._path("sim", key, "json")
        p.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(p, json.dumps(result))


def _inputs_digest(kernel: str, size: str, seed: int) -> str:
    from tapeflow.bench import kernel_arguments

    return gradients_digest({str(i): a for i, a in
                             enumerate(kernel_arguments(kernel, size, seed))})  # fmt: skip


def run_sweep(spec: Spec, out_dir: str | Path, pool: Pool, *, progress: bool = True,
              on_point: Callable[[Point, SweepStats], None] | None = None) -> SweepStats:
    """Runs every point of `spec` not yet in `out_dir` on `pool`; see the module doc.
    `on_point` is called after each finished point (tests use it to interrupt)."""
    from tapeflow import bench

    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = _Cache(out_dir / "cache")
    stats = SweepStats(points=len(spec.points))
    fingerprint = code_fingerprint()
    kernels = bench.kernels()

    old = read_results(out_dir)
    done: set[tuple[str, str]] = set()
    if old is not None:
        for pid, v, err in zip(old.column("point_id").to_pylist(),
                               old.column("variant").to_pylist(),
                               old.column("error").to_pylist(), strict=True):  # fmt: skip
            if err is None:
                done.add((pid, v))
    todo = [p for p in spec.points if any((p.id, v) not in done for v in spec.variants)]
    stats.points_skipped = len(spec.points) - len(todo)

    # (point index, variant) -> its IR key; IR key -> compile arguments
    specs_of = {}
    needs_ir: dict[str, list[tuple[int, str]]] = defaultdict(list)
    compile_args: dict[str, tuple[Any, ...]] = {}
    for i, p in enumerate(todo):
        specs_of[i] = {v: pipeline_of(v, p) for v in spec.variants}
        for v in spec.variants:
            source = kernels[p.kernel].source(p.size)
            key = _digest(fingerprint, source, specs_of[i][v])
            needs_ir[key].append((i, v))
            compile_args[key] = (p.kernel, p.size, specs_of[i][v])

    results: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    inputs: dict[tuple[str, str, int], str] = {}
    buffer: list[dict[str, Any]] = []
    last_flush = time.perf_counter()
    bar = progress_bar(len(todo), progress, "tapeflow-sweep", unit="point")
    futures = pool.as_completed()
    kinds: dict[Any, tuple[str, Any]] = {}

    def flush() -> None:
        nonlocal last_flush
        _write_part(out_dir, buffer)
        buffer.clear()
        last_flush = time.perf_counter()

    def finish(i: int, v: str, result: dict[str, Any]) -> None:
        results[i][v] = result
        if len(results[i]) == len(spec.variants):  # a point is written when all its variants are
            if bar is not None:
                bar.update(1)
            rows = _rows_for(todo[i], spec.variants, results.pop(i), specs_of[i])
            stats.rows += len(rows)
            stats.errors += sum(1 for r in rows if r["error"])
            buffer.extend(rows)
            if len(buffer) >= FLUSH_ROWS or time.perf_counter() - last_flush > FLUSH_SECONDS:
                flush()
            if on_point is not None:
                on_point(todo[i], stats)

    from_cache: set[str] = set()
    waiting: dict[str, list[tuple[int, str]]] = {}
    """sim key -> the units waiting for that simulation (identical IR can come from two
    pipelines, and the Enzyme layout's IR from every pass option)."""

    def have_ir(key: str, ir: str | None, error: str | None) -> None:
        """Every unit that needs this IR: from the cache, or grouped into new tasks."""
        new: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
        ir_hash = _digest(ir) if ir is not None else None
        for i, v in needs_ir.pop(key):
            p = todo[i]
            if ir is None:
                finish(i, v, {"error": f"compile: {error}"})
                continue
            ikey = (p.kernel, p.size, p.seed)
            if ikey not in inputs:
                inputs[ikey] = _inputs_digest(*ikey)
            sim_key = _digest(fingerprint, ir_hash, json.dumps(p.machine, sort_keys=True),
                              inputs[ikey])  # fmt: skip
            cached = cache.get_sim(sim_key)
            if cached is not None:
                from_cache.add(sim_key)
                stats.simulations_cached = len(from_cache)
                finish(i, v, {**cached, "ir_sha256": ir_hash, "sim_key": sim_key})
            elif sim_key in waiting:
                waiting[sim_key].append((i, v))
            else:
                waiting[sim_key] = [(i, v)]
                new[ikey][sim_key] = p.machine
        for ikey, machines in new.items():
            keys = list(machines)
            for start in range(0, len(keys), MACHINES_PER_TASK):
                chunk = keys[start : start + MACHINES_PER_TASK]
                fut = pool.submit(simulate_task, ir, *ikey, [machines[k] for k in chunk],
                                  spec.backend, key="tapeflow-sim-" + _digest(*chunk)[:32])
                kinds[fut] = ("sim", (chunk, ir_hash))
                futures.add(fut)
                stats.tasks += 1

    try:
        for key in list(needs_ir):
            ir = cache.get_ir(key)
            if ir is not None:
                stats.compiles_cached += 1
                have_ir(key, ir, None)
            else:
                fut = pool.submit(compile_task, *compile_args[key],
                                  key=f"tapeflow-compile-{key[:32]}")  # fmt: skip
                kinds[fut] = ("compile", key)
                futures.add(fut)
                stats.tasks += 1
        for fut in futures:
            kind, what = kinds.pop(fut)
            try:
                value = fut.result()
            except Exception as e:  # the task itself is lost (e.g. KilledWorker)
                value = None
                error = f"{type(e).__name__}: {e}".strip()
            if kind == "compile":
                if value is not None:
                    error = value["error"]
                    if value["ir"] is not None:
                        stats.compiles_run += 1
                        cache.put_ir(what, value["ir"])
                have_ir(what, value["ir"] if value else None, error)
                continue
            chunk, ir_hash = what
            for j, sim_key in enumerate(chunk):
                result = value[j] if value is not None else {"error": error}
                if result.get("error") is None:
                    stats.simulations_run += 1
                    cache.put_sim(sim_key, {k: result[k] for k in ("report", "path",
                                                                   "grads_sha256", "error")})
                for i, v in waiting.pop(sim_key):
                    finish(i, v, {**result, "ir_sha256": ir_hash, "sim_key": sim_key})
    finally:
        flush()
        if bar is not None:
            bar.close()
    _merge_parts(out_dir)
    stats.wall_s = time.perf_counter() - t0
    return stats


def interrupted_message(out_dir: str | Path, spec: Spec) -> str:
    """What an interrupted sweep kept: the points whose every variant finished (a point's
    rows are written together, to OUT/parts/ and merged into results.parquet)."""
    table = read_results(out_dir)
    done: dict[str, int] = defaultdict(int)
    if table is not None:
        for pid, err in zip(table.column("point_id").to_pylist(),
                            table.column("error").to_pylist(), strict=True):  # fmt: skip
            if err is None:
                done[pid] += 1
    ids = {p.id for p in spec.points}
    kept = sum(1 for pid, n in done.items() if pid in ids and n >= len(spec.variants))
    where = Path(out_dir)
    if not kept:
        return (f"interrupted: no point had finished all its {len(spec.variants)} variants, "
                f"so nothing is kept in {where}; run the same command again to start over")
    return (f"interrupted: {kept} of {len(spec.points)} points finished and are kept in "
            f"{where} ({RESULTS} and parts/; a point is written when all its variants are "
            "done); run the same command again to resume with the others")


def progress_bar(total: int, enabled: bool, desc: str, unit: str = "run") -> Any:
    """A tqdm bar on stderr (None when disabled or tqdm is missing)."""
    if not enabled or total == 0:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True, desc=desc)


# ------------------------------------------------------------------------------------------
# Plots


def summary(table: Any, stats: SweepStats, workers: int | str) -> dict[str, Any]:
    """What a run did and, per kernel, TapeFlow's speedup range over the grid and the
    Pareto front of (on-chip SRAM, cycles) of both designs, and with checkpointing, each
    checkpoint row's cycles and DRAM footprint beside its point's TapeFlow and Enzyme
    layout: the figures docs quote (the README's sweep examples: docs/sweep-example.json,
    docs/sweep-checkpoint.json, checked by test_bench_readme.py)."""
    rows = [r for r in table.to_pylist() if not r.get("error")]
    out: dict[str, Any] = {
        "points": stats.points, "rows": stats.rows, "errors": stats.errors,
        "compiles_run": stats.compiles_run, "simulations_run": stats.simulations_run,
        "tasks": stats.tasks, "wall_s": stats.wall_s, "workers": workers,
        "grads_identical": all(r.get("grads_identical") is not False for r in rows),
        "kernels": {},
    }  # fmt: skip
    for kernel in dict.fromkeys(r["kernel"] for r in rows):
        mine = [r for r in rows if r["kernel"] == kernel and r["variant"] in ("enzyme",
                                                                               "tapeflow")]
        speed = [r["speedup"] for r in mine if r["variant"] == "tapeflow" and r.get("speedup")]
        front = pareto_front([(float(r["sram_bytes"]), float(r["report.cycles"])) for r in mine])
        out["kernels"][kernel] = {
            "speedup_min": min(speed, default=None), "speedup_max": max(speed, default=None),
            "front": [{"variant": mine[i]["variant"], "sram_bytes": mine[i]["sram_bytes"],
                       "cycles": mine[i]["report.cycles"], "speedup": mine[i].get("speedup"),
                       **{a: mine[i].get(a) for a in grid_axes(table.column_names)
                          if a != "kernel"}} for i in front],
        }  # fmt: skip
        ckpt = [r for r in rows if r["kernel"] == kernel and r["variant"] == "checkpoint"]
        others = [a for a in grid_axes(table.column_names) if a not in ("kernel", "snapshots")]
        ckpt.sort(key=lambda r: (json.dumps([r.get(a) for a in others]), r["snapshots"]))
        if ckpt:
            by_point = {(r["point_id"], r["variant"]): r for r in rows}

            def other(r: dict[str, Any], variant: str, key: str) -> Any:
                return by_point.get((r["point_id"], variant), {}).get(key)

            out["kernels"][kernel]["checkpoint"] = [{
                **{a: r.get(a) for a in grid_axes(table.column_names) if a != "kernel"},
                "cycles": r["report.cycles"], "tape_bytes": r["report.tape_bytes"],
                "snapshot_bytes": r["report.snapshot_bytes"],
                "dram_footprint_bytes": r["dram_footprint_bytes"],
                "cycles_vs_tapeflow": r.get("cycles_vs_tapeflow"),
                "footprint_reduction": r.get("footprint_reduction"),
                "speedup": r.get("speedup"),
                "tapeflow_cycles": other(r, "tapeflow", "report.cycles"),
                "tapeflow_footprint_bytes": other(r, "tapeflow", "dram_footprint_bytes"),
                "enzyme_cycles": other(r, "enzyme", "report.cycles"),
                "enzyme_footprint_bytes": other(r, "enzyme", "dram_footprint_bytes"),
            } for r in ckpt]  # fmt: skip
    return out


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both coordinates (lower is better),
    sorted by the first coordinate."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    front: list[int] = []
    best = math.inf
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    import csv

    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["empty"])
        writer.writeheader()
        writer.writerows(rows)


def heatmap_axes(rows: Sequence[dict[str, Any]], axes: Sequence[str]) -> list[str]:
    """The two axes with the most distinct values (ties: spec order), kernel excluded, and
    the checkpoint options too (TapeFlow's rows do not depend on them)."""
    counts = {a: len({json.dumps(r.get(a)) for r in rows}) for a in axes
              if a != "kernel" and a not in CHECKPOINT_OPTIONS}  # fmt: skip
    varying = sorted((a for a in counts if counts[a] > 1), key=lambda a: -counts[a])
    return varying[:2]


def write_plots(table: Any, plot_dir: str | Path, heatmap: Sequence[str] = (),
                axes: Sequence[str] = ()) -> list[Path]:  # fmt: skip
    """Heatmaps of TapeFlow's speedup and on-chip energy ratio over two axes (geomean over
    the others), cycles vs on-chip SRAM of both designs, the Pareto front of
    (cycles, SRAM) per kernel, and cycles vs DRAM footprint (tape + snapshots) of the
    Enzyme layout, TapeFlow and TapeFlow with checkpointing: a PNG and a CSV each. Returns
    the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tapeflow.bench import geomean

    plot_dir = Path(plot_dir)
    plot_dir.mkdir(parents=True, exist_ok=True)
    rows = [r for r in table.to_pylist() if not r.get("error")]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    if not axes:
        axes = grid_axes(table.column_names)
    axes = list(axes)
    paths: list[Path] = []

    def save(fig: Any, name: str, data: list[dict[str, Any]]) -> None:
        fig.tight_layout()
        fig.savefig(plot_dir / f"{name}.png", dpi=100)
        plt.close(fig)
        _write_csv(plot_dir / f"{name}.csv", data)
        paths.extend([plot_dir / f"{name}.png", plot_dir / f"{name}.csv"])

    missing = [a for a in heatmap if a not in table.column_names]
    if missing:
        raise ToolError(f"heatmap axis {', '.join(map(repr, missing))} is not a column of "
                        f"the results (axes: {', '.join(axes)})")  # fmt: skip
    tf = [r for r in rows if r["variant"] == "tapeflow" and r.get("speedup") is not None]
    pair = list(heatmap) or heatmap_axes(tf, axes)
    if tf and len(pair) == 2:
        x_axis, y_axis = pair
        for metric, title in (("speedup", "TapeFlow speedup over the Enzyme layout"),
                              ("energy_ratio_on_chip",
                               "on-chip energy, Enzyme layout / TapeFlow")):  # fmt: skip
            xs = sorted({r[x_axis] for r in tf}, key=_sort_key)
            ys = sorted({r[y_axis] for r in tf}, key=_sort_key)
            panels = [k for k in kernels if any(r["kernel"] == k for r in tf)]
            fig, axs = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 0.8, 3.6),
                                    squeeze=False)  # fmt: skip
            data = []
            for ax, kernel in zip(axs[0], panels, strict=True):
                grid = [[geomean(r[metric] for r in tf if r["kernel"] == kernel
                                  and r[x_axis] == x and r[y_axis] == y) for x in xs]
                        for y in ys]  # fmt: skip
                values = [[math.nan if v is None else v for v in row] for row in grid]
                finite = [v for row in values for v in row if not math.isnan(v)]
                # red below 1 (TapeFlow worse), green above, always centred on 1.0 with a
                # scale symmetric in ratio (0.8 is as red as 1.25 is green)
                spread = max((abs(math.log(v)) for v in finite if v > 0), default=0.0)
                spread = max(spread, 0.01)
                norm = matplotlib.colors.TwoSlopeNorm(vcenter=1.0, vmin=math.exp(-spread),
                                                      vmax=math.exp(spread))  # fmt: skip
                im = ax.imshow(values, origin="lower", cmap="RdYlGn", aspect="auto", norm=norm)
                for yi, row in enumerate(values):
                    for xi, v in enumerate(row):
                        if not math.isnan(v):
                            ax.text(xi, yi, f"{v:.3f}", ha="center", va="center", fontsize=7)
                        data.append({"kernel": kernel, x_axis: xs[xi], y_axis: ys[yi],
                                     metric: None if math.isnan(v) else v})  # fmt: skip
                ax.set_xticks(range(len(xs)), [_label(x) for x in xs], rotation=30, fontsize=7)
                ax.set_yticks(range(len(ys)), [_label(y) for y in ys], fontsize=7)
                ax.set_xlabel(x_axis)
                ax.set_ylabel(y_axis)
                ax.set_title(kernel, fontsize=9)
                fig.colorbar(im, ax=ax, fraction=0.046)
            fig.suptitle(f"{title} (geomean over the other axes)", fontsize=10)
            save(fig, f"heatmap_{metric}", data)

    # cycles vs on-chip SRAM, both designs, and the Pareto front per kernel
    designs = [v for v in ("enzyme", "tapeflow") if any(r["variant"] == v for r in rows)]
    if rows and designs:
        fig, axs = plt.subplots(1, len(kernels), figsize=(4.2 * len(kernels) + 0.4, 3.6),
                                squeeze=False)  # fmt: skip
        fig2, axs2 = plt.subplots(1, len(kernels), figsize=(4.2 * len(kernels) + 0.4, 3.6),
                                  squeeze=False)  # fmt: skip
        curve_data: list[dict[str, Any]] = []
        front_data: list[dict[str, Any]] = []
        colors = {"enzyme": "#31a354", "tapeflow": "#08519c"}
        for ax, ax2, kernel in zip(axs[0], axs2[0], kernels, strict=True):
            mine = [r for r in rows if r["kernel"] == kernel and r["variant"] in designs]
            for v in designs:
                best: dict[int, float] = {}
                for r in mine:
                    if r["variant"] == v:
                        s = r["sram_bytes"]
                        best[s] = min(best.get(s, math.inf), r["report.cycles"])
                sram = sorted(best)
                envelope, low = [], math.inf  # fewest cycles with AT MOST this SRAM
                for s_ in sram:
                    low = min(low, best[s_])
                    envelope.append(low)
                ax.step([s_ / 1024 for s_ in sram], envelope, where="post", marker="o", ms=3,
                        color=colors[v], label=bench_label(v))  # fmt: skip
                curve_data += [{"kernel": kernel, "variant": v, "sram_bytes": s_,
                                "min_cycles": best[s_], "min_cycles_up_to": e}
                               for s_, e in zip(sram, envelope, strict=True)]  # fmt: skip
            pts = [(float(r["sram_bytes"]), float(r["report.cycles"])) for r in mine]
            front = pareto_front(pts)
            for v in designs:
                sel = [i for i, r in enumerate(mine) if r["variant"] == v]
                ax2.scatter([pts[i][0] / 1024 for i in sel], [pts[i][1] for i in sel], s=10,
                            color=colors[v], alpha=0.4, label=bench_label(v))  # fmt: skip
            ax2.plot([pts[i][0] / 1024 for i in front], [pts[i][1] for i in front], "k-",
                     lw=0.8, label="Pareto front")  # fmt: skip
            for v in designs:  # each front point in its design's colour
                sel = [i for i in front if mine[i]["variant"] == v]
                ax2.scatter([pts[i][0] / 1024 for i in sel], [pts[i][1] for i in sel],
                            marker="s", s=30, color=colors[v], edgecolors="black", zorder=3,
                            label=f"front: {bench_label(v)}" if sel else None)  # fmt: skip
            for i in front:
                front_data.append({"kernel": kernel, "sram_bytes": int(pts[i][0]),
                                   "cycles": pts[i][1], "variant": mine[i]["variant"],
                                   **{a: mine[i].get(a) for a in axes if a != "kernel"}})
            for a in (ax, ax2):
                a.set_xscale("log", base=2)
                a.set_xlabel("on-chip SRAM: L1 + L2 (+ SPM capacity), KiB")
                a.set_ylabel("cycles")
                a.set_title(kernel, fontsize=9)
                a.legend(fontsize=7)
        fig.suptitle("Fewest cycles with at most this much on-chip SRAM (any pass option)",
                     fontsize=10)  # fmt: skip
        fig2.suptitle("Pareto front of (cycles, on-chip SRAM), both designs", fontsize=10)
        save(fig, "cycles_vs_sram", curve_data)
        save(fig2, "pareto", front_data)
    if any(r["variant"] == "checkpoint" for r in rows):
        fig, data = _footprint_plot(plt, rows, kernels, axes)
        save(fig, "cycles_vs_footprint", data)
    return paths


def _footprint_plot(plt: Any, rows: list[dict[str, Any]], kernels: list[str],
                    axes: Sequence[str]) -> tuple[Any, list[dict[str, Any]]]:  # fmt: skip
    """Cycles against DRAM footprint (tape + snapshots), log-log, per kernel: the Enzyme
    layout, TapeFlow, and TapeFlow with checkpointing (one marker per machine; the
    checkpoint points that differ only in `snapshots` joined, labelled s=K)."""
    designs = [v for v in ("enzyme", "tapeflow", "checkpoint") if any(r["variant"] == v
                                                                      for r in rows)]  # fmt: skip
    colors = {"enzyme": "#31a354", "tapeflow": "#08519c", "checkpoint": "#e6550d"}
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    markers = dict(zip(machines, itertools.cycle("os^vDP"), strict=False))
    fig, axs = plt.subplots(1, len(kernels), figsize=(5.2 * len(kernels) + 0.4, 4.2),
                            squeeze=False)  # fmt: skip
    data: list[dict[str, Any]] = []
    others = [a for a in axes if a not in ("kernel", "snapshots")]
    for ax, kernel in zip(axs[0], kernels, strict=True):
        for v in designs:
            seen: set[tuple[Any, ...]] = set()
            curves: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for r in rows:
                if r["kernel"] != kernel or r["variant"] != v:
                    continue
                xy = (r["dram_footprint_bytes"], r["report.cycles"])
                if v == "checkpoint":
                    curves[json.dumps([r.get(a) for a in others])].append(r)
                elif (r["machine"], *xy) in seen:  # the same run at another snapshot count
                    continue
                seen.add((r["machine"], *xy))
                ax.scatter(xy[0] / 1024, xy[1], marker=markers[r["machine"]], s=24,
                           color=colors[v], zorder=3)  # fmt: skip
                data.append({"kernel": kernel, "variant": v, "dram_footprint_bytes": xy[0],
                             "cycles": xy[1],
                             **{a: r.get(a) for a in axes if a != "kernel"}})  # fmt: skip
                if v == "checkpoint":
                    ax.annotate(f"s={r['snapshots']}", (xy[0] / 1024, xy[1]), fontsize=6,
                                xytext=(3, 3), textcoords="offset points")  # fmt: skip
            for curve in curves.values():
                curve.sort(key=lambda r: r["snapshots"])
                ax.plot([r["dram_footprint_bytes"] / 1024 for r in curve],
                        [r["report.cycles"] for r in curve], lw=0.8, color=colors[v])  # fmt: skip
            for machine in machines:  # one legend entry per (design, machine)
                if any(r["kernel"] == kernel and r["variant"] == v and r["machine"] == machine
                       for r in rows):  # fmt: skip
                    label = bench_label(v) + (f" ({machine})" if len(machines) > 1 else "")
                    ax.scatter([], [], marker=markers[machine], color=colors[v], label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("DRAM footprint: tape + checkpoint snapshots, KiB")
        ax.set_ylabel("cycles")
        ax.set_title(kernel, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Cycles against the gradient's DRAM footprint", fontsize=10)
    return fig, data


def bench_label(variant: str) -> str:
    from tapeflow.bench import LABELS

    return CHECKPOINT_LABEL if variant == "checkpoint" else LABELS.get(variant, variant)


def _sort_key(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, int | float) and not isinstance(v, bool) else (1, str(v))


def _label(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1024 and v % 1024 == 0:
        return f"{v // 1024}K"
    return str(v)
