"""Design-space sweeps: a grid of (kernel, machine, pass options) points on Dask distributed.

A sweep spec (TOML, see `SPEC_DOC`) names the axes; every point is the variants of
`tapeflow.eval.jobs` (Enzyme layout, regions only, TapeFlow, ideal tape) compiled and
simulated, plus `checkpoint` (TapeFlow with `tapeflow-checkpoint`), when the spec sweeps
`snapshots`. The work is split so that nothing is done twice:

- compile: one task per (kernel source, pipeline) -- the Enzyme, ideal-tape and regions-only
  IR do not depend on the pass options, TapeFlow's on the machine only through its costs --
  cached on disk under `OUT/cache/ir/` by a hash of (code, kernel source, the passes with their
  options and machine costs: `jobs.pipeline_key`);
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
import io
import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.passes import ModulePass
from xdsl.printer import Printer

import tapeflow
import tapeflow.dialects
import tapeflow.hwmodel
import tapeflow.transforms
from tapeflow import machines, runner
from tapeflow.eval.bundled import kernel_dir
from tapeflow.eval.jobs import (
    apply_passes,
    default_raw,
    kernel_arguments,
    kernels,
    machine_from_raw,
    pipeline_key,
    pipeline_text,
    tapeflow_options,
)
from tapeflow.eval.pool import Pool, progress_bar
from tapeflow.eval.run import simulate_many
from tapeflow.eval.summary import captured_share, ratio
from tapeflow.eval.sweep.results import (
    RESULTS,
    SweepStats,
    atomic_write,
    merge_parts,
    read_results,
    write_part,
)
from tapeflow.eval.sweep.spec import Point, Spec, digest, flatten_table

MACHINES_PER_TASK = 8
"""At most this many machines share one simulation run (and one task)."""
FLUSH_ROWS = 48
FLUSH_SECONDS = 5.0


# ------------------------------------------------------------------------------------------
# Tasks (run on the workers)


def code_fingerprint() -> str:
    """A hash of TapeFlow's own sources (compiler, model, kernels' inputs): a cached IR or
    simulation is only reused by the code that made it."""
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


def pipeline_of(variant: str, point: Point) -> list[ModulePass]:
    """The passes of one variant at one point: `jobs.Job`'s (TapeFlow's cost model deciding
    for the point's machine), and for `checkpoint` TapeFlow's with
    `checkpoint=SCHEDULE-SNAPSHOTS`."""
    tapeflow = variant if variant != "checkpoint" else "tapeflow"
    schedule = f"{point.schedule}-{point.snapshots}" if variant == "checkpoint" else ""
    options = tapeflow_options(point.spm_bytes, point.tile_bytes, point.depth,
                               machine=point.machine_file, sets=point.overrides,
                               checkpoint=schedule)  # fmt: skip
    if tapeflow != "tapeflow":  # the layouts that decide nothing
        return machines.pipeline(tapeflow, options)
    machine = machine_from_raw(point.machine or default_raw())
    return machines.pipeline(tapeflow, options, machines.machine_costs(machine, options.machine))


def kernel_of(ref: Any) -> Any:
    """A point's kernel: a bundled kernel by name, or a kernel file (`kernels.FileKernel`)."""
    return kernels()[ref] if isinstance(ref, str) else ref


def compile_task(kernel: Any, size: str, passes: Sequence[ModulePass]) -> dict[str, Any]:
    """The IR text of one kernel compiled by `passes` (never raises: errors come back)."""
    try:
        module = kernel_of(kernel).load(size)
        apply_passes(module, passes)
    except Exception as e:
        return {"ir": None, "error": f"{type(e).__name__}: {e}".strip()}
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return {"ir": out.getvalue() + "\n", "error": None}


def flatten_report(report: dict[str, Any]) -> dict[str, Any]:
    """`report.a.b` columns; lists become JSON text."""
    return {f"report.{k}": json.dumps(v) if isinstance(v, list) else v
            for k, v in flatten_table(report).items()}  # fmt: skip


def gradients_digest(grads: dict[str, Any]) -> str:
    """sha256 over every argument after the run (name, dtype, shape, bytes)."""
    parts: list[str | bytes] = []
    for name in sorted(grads):
        a = np.ascontiguousarray(grads[name])
        parts += [name, str(a.dtype), str(a.shape), a.tobytes()]
    return digest(*parts)


def simulate_task(ir: str, kernel: Any, size: str, seed: int, machines: list[dict[str, Any]],
                  backend: str) -> list[dict[str, Any]]:  # fmt: skip
    """One result per machine (report, gradients digest, path or error), from one run of
    the program when the machines allow it, else one run each."""
    t0 = time.perf_counter()
    k = kernel_of(kernel)
    try:
        module = runner.load_module(ir, f"{k.name}.mlir")
    except Exception as e:
        return [{"error": f"{type(e).__name__}: {e}".strip()} for _ in machines]
    entry = k.grad_entry

    def run(raws: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sims, path = simulate_many(
            module, entry, lambda: kernel_arguments(k.name, size, seed, kernel=k),
            [machine_from_raw(r) for r in raws], backend,
        )  # fmt: skip
        names = k.argument_names(size)
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
# The driver


def _rows_for(point: Point, variants: Sequence[str], results: dict[str, dict[str, Any]],
              specs: dict[str, str]) -> list[dict[str, Any]]:  # fmt: skip
    """The point's rows: axes, identity, every report field, ratios to the Enzyme layout
    (and, on checkpoint rows, to TapeFlow; on TapeFlow rows, the share of the ideal tape
    it captures when the point has one)."""
    def report_of(variant: str) -> dict[str, Any] | None:
        r = results.get(variant)
        return r.get("report") if r and not r.get("error") else None

    base = results.get("enzyme")
    base_rep = report_of("enzyme")
    tf_rep = report_of("tapeflow")
    ideal_rep = report_of("ideal-tape")
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
            row["speedup"] = ratio(base_rep["report.cycles"], rep["report.cycles"])
            for name in ("on_chip_pj", "total_pj"):
                key = f"report.energy.{name}"
                row[f"energy_ratio_{name[:-3]}"] = ratio(base_rep[key], rep[key])
            row["grads_identical"] = r.get("grads_sha256") == base.get("grads_sha256")
        if rep and base_rep and ideal_rep and v == "tapeflow":
            row["captured_share"] = captured_share(
                base_rep["report.cycles"], rep["report.cycles"], ideal_rep["report.cycles"])
        if rep and tf_rep and v == "checkpoint":
            row["cycles_vs_tapeflow"] = ratio(rep["report.cycles"], tf_rep["report.cycles"])
            row["footprint_reduction"] = ratio(footprint(tf_rep), footprint(rep))
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
        atomic_write(p, text)

    def get_sim(self, key: str) -> dict[str, Any] | None:
        p = self._path("sim", key, "json")
        return json.loads(p.read_text()) if p.is_file() else None

    def put_sim(self, key: str, result: dict[str, Any]) -> None:
        p = self._path("sim", key, "json")
        p.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(p, json.dumps(result))


def _inputs_digest(kernel: Any, size: str, seed: int) -> str:
    k = kernel_of(kernel)
    values = kernel_arguments(k.name, size, seed, kernel=k)
    return gradients_digest({str(i): a for i, a in enumerate(values)})


def run_sweep(spec: Spec, out_dir: str | Path, pool: Pool, *, progress: bool = True,
              on_point: Callable[[Point, SweepStats], None] | None = None) -> SweepStats:
    """Runs every point of `spec` not yet in `out_dir` on `pool`; see the module doc.
    `on_point` is called after each finished point (tests use it to interrupt)."""
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = _Cache(out_dir / "cache")
    stats = SweepStats(points=len(spec.points))
    fingerprint = code_fingerprint()

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
        passes = {v: pipeline_of(v, p) for v in spec.variants}
        specs_of[i] = {v: pipeline_text(passes[v]) for v in spec.variants}
        for v in spec.variants:
            source = kernel_of(p.kernel).source(p.size)
            key = digest(fingerprint, source, pipeline_key(passes[v]))
            needs_ir[key].append((i, v))
            compile_args[key] = (p.kernel, p.size, passes[v])

    results: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    inputs: dict[tuple[str, str, int], str] = {}
    buffer: list[dict[str, Any]] = []
    last_flush = time.perf_counter()
    bar = progress_bar(len(todo), progress, "tapeflow-sweep", unit="point")
    futures = pool.as_completed()
    kinds: dict[Any, tuple[str, Any]] = {}

    def flush() -> None:
        nonlocal last_flush
        write_part(out_dir, buffer)
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
        ir_hash = digest(ir) if ir is not None else None
        for i, v in needs_ir.pop(key):
            p = todo[i]
            if ir is None:
                finish(i, v, {"error": f"compile: {error}"})
                continue
            ikey = (p.kernel, p.size, p.seed)
            if ikey not in inputs:
                inputs[ikey] = _inputs_digest(*ikey)
            sim_key = digest(fingerprint, ir_hash, json.dumps(p.machine, sort_keys=True),
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
                                  spec.backend, key="tapeflow-sim-" + digest(*chunk)[:32])
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
    merge_parts(out_dir)
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
