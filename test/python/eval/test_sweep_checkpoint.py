"""The sweep's `snapshots` axis (issue 21): the hardware report's `snapshot_bytes`, the
fourth variant `checkpoint` (TapeFlow with `tapeflow-checkpoint`), its rows' DRAM
footprint and ratios to TapeFlow, and the cycles-vs-footprint plot. One tiny kernel
(mass_spring, small), two snapshot counts, in process."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow", reason="the sweep writes Parquet with pyarrow (extra 'sweep')")

from tapeflow import runner
from tapeflow.eval import jobs
from tapeflow.eval.jobs import (
    VARIANTS,
    default_raw,
    kernel_arguments,
    machine_from_raw,
    pipeline_text,
)
from tapeflow.eval.pool import Pool
from tapeflow.eval.sweep.engine import compile_task, pipeline_of, run_sweep
from tapeflow.eval.sweep.results import SweepStats, read_results, summary
from tapeflow.eval.sweep.spec import Point, SpecError, load_spec

SNAPSHOTS = (1, 3)
SPEC = f"""\
kernels = ["mass_spring"]
sizes = ["small"]
[pass]
snapshots = {list(SNAPSHOTS)}
"""

# One pytest-xdist worker runs the tests that share the module-scoped runs below.
pytestmark = pytest.mark.xdist_group("sweep_checkpoint")


def _marked_alloc_bytes(module: Any) -> int:
    """Bytes of the `memref.alloc`s `tapeflow-checkpoint` marks, read off the IR's types
    (the model counts them while the program runs)."""
    from tapeflow.transforms.checkpoint import SNAPSHOT_ATTR
    from xdsl.dialects import memref

    total = 0
    for op in module.walk():
        if isinstance(op, memref.AllocOp) and SNAPSHOT_ATTR in op.attributes:
            t = op.memref.type
            assert t.element_type.bitwidth % 8 == 0
            total += math.prod(t.get_shape()) * t.element_type.bitwidth // 8
    return total


@pytest.mark.parametrize("path", ["fast", "interp"])
def test_report_counts_snapshot_allocs(path: str) -> None:
    """`snapshot_bytes` = the marked allocs' bytes, on the fast path and op by op; 0 without
    checkpointing; and the snapshot buffers are not counted as tape."""
    from tapeflow.simulate import simulate, simulate_fast_many

    kernel = jobs.kernels()["mass_spring"]
    point = Point({}, "mass_spring", "small", 0, {}, 32768, 0, 2, 2, "binomial")
    reports = {}
    for v in ("tapeflow", "checkpoint"):
        out = compile_task("mass_spring", "small", pipeline_of(v, point))
        assert out["error"] is None
        module = runner.load_module(out["ir"], "mass_spring.mlir")  # as the sweep's tasks
        args = kernel_arguments("mass_spring", "small")
        machine = machine_from_raw(default_raw())
        if path == "fast":
            sim = simulate_fast_many(module, kernel.grad_entry, args, [machine])[0]
        else:
            sim = simulate(module, kernel.grad_entry, args, machine)
        reports[v] = (sim.report, _marked_alloc_bytes(module))
    tf, ckpt = reports["tapeflow"], reports["checkpoint"]
    assert tf[1] == 0
    assert tf[0]["snapshot_bytes"] == 0
    assert ckpt[1] > 0
    assert ckpt[0]["snapshot_bytes"] == ckpt[1]
    # a segment's tape, not the whole loop's: smaller than TapeFlow's, and no snapshot in it
    assert 0 < ckpt[0]["tape_bytes"] < tf[0]["tape_bytes"]


def test_spec_axes(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    spec = load_spec(path)
    assert spec.variants == (*VARIANTS, "checkpoint")
    assert spec.axes[-2:] == ["snapshots", "schedule"]
    assert [(p.snapshots, p.schedule) for p in spec.points] == [(s, "binomial") for s in SNAPSHOTS]
    assert [pipeline_text(pipeline_of("checkpoint", p)) for p in spec.points] == [
        f"tapeflow{{spm-bytes={p.spm_bytes} tile-bytes=0 depth=2 cleanup=true "
        f"checkpoint=binomial-{p.snapshots}}}" for p in spec.points]  # fmt: skip
    # without the axis: neither the variant nor its columns (point ids as before)
    path.write_text('kernels = ["mass_spring"]\n')
    plain = load_spec(path)
    assert plain.variants == VARIANTS
    assert "snapshots" not in plain.points[0].columns
    path.write_text('kernels = ["mass_spring"]\n[pass]\nsnapshots = 4\nschedule = '
                    '["binomial", "periodic"]\n')  # fmt: skip
    assert [p.schedule for p in load_spec(path).points] == ["binomial", "periodic"]


@pytest.mark.parametrize(("text", "where", "message"), [
    ('variants = ["checkpoint"]', "spec.toml:2:1", "variant 'checkpoint' needs a snapshots"),
    ('[pass]\nschedule = "binomial"', "spec.toml:3:1", "'schedule' needs a snapshots axis"),
    ('[pass]\nsnapshots = 4\nschedule = "revolve"', "spec.toml:4:1", "must be one of"),
    ("[pass]\nsnapshots = [4, 0]", "spec.toml:3:1", "snapshots must be at least 1, got 0"),
    ('[pass]\nsnapshots = "8"', "spec.toml:3:1", "'snapshots' must be an integer"),
])  # fmt: skip
def test_spec_errors(tmp_path: Path, text: str, where: str, message: str) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(f'kernels = ["mass_spring"]\n{text}\n')
    with pytest.raises(SpecError) as e:
        load_spec(path)
    assert str(e.value).startswith(str(tmp_path / where) + ": "), str(e.value)
    assert message in str(e.value)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SweepStats, Any]:
    root = tmp_path_factory.mktemp("ckpt")
    (root / "spec.toml").write_text(SPEC)
    spec = load_spec(root / "spec.toml")
    with Pool(1) as pool:
        stats = run_sweep(spec, root / "out", pool, progress=False)
    return root, stats, spec


def test_checkpoint_rows(run: tuple[Path, SweepStats, Any]) -> None:
    root, stats, _ = run
    rows = read_results(root / "out").to_pylist()
    assert stats.errors == 0
    assert len(rows) == (len(VARIANTS) + 1) * len(SNAPSHOTS)
    # the bench variants ignore the snapshot count: compiled and simulated once
    assert stats.compiles_run == len(VARIANTS) + len(SNAPSHOTS)
    assert stats.simulations_run == len(VARIANTS) + len(SNAPSHOTS)
    by = {(r["snapshots"], r["variant"]): r for r in rows}
    for s in SNAPSHOTS:
        ck, tf = by[(s, "checkpoint")], by[(s, "tapeflow")]
        assert ck["grads_identical"] is True
        assert ck["grads_sha256"] == tf["grads_sha256"]
        assert ck["pipeline"].endswith(f" checkpoint=binomial-{s}}}")
        assert ck["schedule"] == "binomial"
        for r in (ck, tf):
            assert r["dram_footprint_bytes"] == r["report.tape_bytes"] + r["report.snapshot_bytes"]
        assert tf["report.snapshot_bytes"] == 0
        assert ck["footprint_reduction"] == tf["dram_footprint_bytes"] / ck["dram_footprint_bytes"]
        assert ck["cycles_vs_tapeflow"] == ck["report.cycles"] / tf["report.cycles"]
        assert tf["sim_key"] == by[(SNAPSHOTS[0], "tapeflow")]["sim_key"]
        assert "cycles_vs_tapeflow" not in tf or tf["cycles_vs_tapeflow"] is None
    # s + 1 slots of the same loop state (transforms/checkpoint.py): bytes / (s + 1) agree
    slots = {by[(s, "checkpoint")]["report.snapshot_bytes"] / (s + 1) for s in SNAPSHOTS}
    assert len(slots) == 1
    assert slots.pop() > 0


def test_summary_and_plot(run: tuple[Path, SweepStats, Any],
                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from tapeflow.tools.sweep import main

    root, stats, _ = run
    table = read_results(root / "out")
    ck = summary(table, stats, 1)["kernels"]["mass_spring"]["checkpoint"]
    assert [c["snapshots"] for c in ck] == list(SNAPSHOTS)
    rows = {(r["snapshots"], r["variant"]): r for r in table.to_pylist()}
    for c in ck:
        assert c["tapeflow_cycles"] == rows[(c["snapshots"], "tapeflow")]["report.cycles"]
        assert c["enzyme_footprint_bytes"] == rows[(c["snapshots"], "enzyme")][
            "dram_footprint_bytes"]  # fmt: skip
    # the CLI on a finished sweep: nothing run again, the plots written
    plots = root / "plots"
    code = main([str(root / "spec.toml"), "--out", str(root / "out"), "--plot", str(plots),
                 "--workers", "1", "--no-progress"])  # fmt: skip
    assert code == 0
    assert "cycles_vs_footprint.png" in capsys.readouterr().out
    assert (plots / "cycles_vs_footprint.png").stat().st_size > 0
    with (plots / "cycles_vs_footprint.csv").open() as f:
        data = list(csv.DictReader(f))
    # one point per design and run: the Enzyme layout and TapeFlow once, each snapshot count
    assert sorted(d["variant"] for d in data) == sorted(
        ["enzyme", "tapeflow"] + ["checkpoint"] * len(SNAPSHOTS))  # fmt: skip
    for d in data:
        r = rows[(int(d["snapshots"]), d["variant"])]
        assert int(d["dram_footprint_bytes"]) == r["dram_footprint_bytes"]
        assert float(d["cycles"]) == r["report.cycles"]
