"""tapeflow-sweep on a 2-worker Dask LocalCluster: the rows equal single-process bench runs,
a worker killed mid-sweep costs nothing, an interrupted sweep resumes, and a rerun with one
more machine value compiles only TapeFlow's IR (its cost model decides for the machine)
and simulates only the new points."""

from __future__ import annotations

import csv
import math
import os
import shutil
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dask.distributed", reason="the sweep needs Dask (extra 'sweep')")
pytest.importorskip("pyarrow", reason="the sweep writes Parquet with pyarrow (extra 'sweep')")

from tapeflow.eval.jobs import VARIANTS, Job, default_raw, machine_from_raw  # noqa: E402
from tapeflow.eval.plots import write_sweep_plots  # noqa: E402
from tapeflow.eval.pool import Pool  # noqa: E402
from tapeflow.eval.run import run_job  # noqa: E402
from tapeflow.eval.sweep.engine import (  # noqa: E402
    flatten_report,
    gradients_digest,
    interrupted_message,
    run_sweep,
)
from tapeflow.eval.sweep.results import RESULTS, SweepStats, pareto_front, read_results  # noqa: E402
from tapeflow.eval.sweep.spec import Point, load_spec  # noqa: E402
from tapeflow.eval.summary import captured_share  # noqa: E402

L2 = (262144, 1048576)
SPM = (4096, 8192, 32768)
SPEC = f"""\
kernels = ["gemm", "softmax_ce"]
sizes = ["small"]
[set]
"l2.size" = {list(L2)}
[pass]
spm-bytes = {list(SPM)}
"""

# Slow (a Dask cluster); one pytest-xdist worker runs the tests that share the
# module-scoped runs below.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("sweep")]


@pytest.fixture(scope="module")
def cluster() -> Any:
    import dask
    from dask.distributed import LocalCluster

    # as Pool starts its own (forkserver: workers end without a slow finalisation)
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         memory_limit="1GiB", dashboard_address=":0") as c:  # fmt: skip
        yield c


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("spec") / "spec.toml"
    path.write_text(SPEC)
    return path


def _rows(out: Path) -> list[dict[str, Any]]:
    return sorted(read_results(out).to_pylist(),
                  key=lambda r: (r["point_id"], r["variant"]))  # fmt: skip


@pytest.fixture(scope="module")
def full_run(cluster: Any, spec_file: Path,
             tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SweepStats]:  # fmt: skip
    out = tmp_path_factory.mktemp("full")
    with Pool(scheduler=cluster.scheduler_address) as pool:
        stats = run_sweep(load_spec(spec_file), out, pool, progress=False)
    return out, stats


def test_rows_equal_single_process_runs(full_run: tuple[Path, SweepStats]) -> None:
    out, stats = full_run
    rows = _rows(out)
    assert stats.points == 12
    assert stats.rows == len(rows) == 12 * len(VARIANTS)
    assert stats.errors == 0
    assert not list((out / "parts").glob("*.parquet"))  # merged into results.parquet
    assert Counter((r["point_id"], r["variant"]) for r in rows).most_common(1)[0][1] == 1
    machine = machine_from_raw(default_raw())
    reference: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        spm = r["spm-bytes"] if r["variant"] == "tapeflow" else 0
        key = (r["kernel"], r["variant"], r["l2.size"], spm)
        if key not in reference:
            raw = machine_from_raw(machine.raw, r["l2.size"]).raw
            reference[key] = run_job(Job(
                kernel=r["kernel"], variant=r["variant"], size="small", machine=raw,
                machine_sets=(f"l2.size={r['l2.size']}",),  # what the cost model is told
                spm_bytes=r["spm-bytes"]))  # fmt: skip
        ref = reference[key]
        assert ref["error"] is None
        expected = flatten_report({k: v for k, v in ref["report"].items() if k != "path"})
        got = {k: v for k, v in r.items() if k.startswith("report.") and v is not None}
        assert got == expected, (key, set(got.items()) ^ set(expected.items()))
        assert r["path"] == ref["path"] == "fast"
        assert r["grads_sha256"] == gradients_digest(ref["grads"])
        assert r["grads_identical"] is True
        assert r["pipeline"] == ref["spec"]
        base = reference[(r["kernel"], "enzyme", r["l2.size"], 0)]["report"]
        assert r["speedup"] == base["cycles"] / ref["report"]["cycles"]
        assert r["energy_ratio_on_chip"] == (base["energy"]["on_chip_pj"]
                                             / ref["report"]["energy"]["on_chip_pj"])  # fmt: skip
        if r["variant"] == "tapeflow":  # rows sort by variant: the point's ideal tape ran
            ideal = reference[(r["kernel"], "ideal-tape", r["l2.size"], 0)]["report"]
            assert r["captured_share"] == captured_share(
                base["cycles"], ref["report"]["cycles"], ideal["cycles"])
    # Whole-chip SRAM (issue 18): L1 + L2, plus the scratchpad's capacity where it is used;
    # iso-SRAM: the Enzyme layout at the smallest such SRAM >= TapeFlow's (other l2.size).
    l1, spm_size = machine.l1.size, machine.spm_size
    for r in rows:
        uses_spm = r["report.sram.spm_high_water_bytes"] > 0
        assert r["sram_bytes"] == l1 + r["l2.size"] + (spm_size if uses_spm else 0)
        if r["variant"] != "tapeflow":
            assert r["speedup_iso_sram"] is None
            continue
        bigger = sorted(l2 for l2 in L2 if l1 + l2 >= r["sram_bytes"])
        if not bigger:
            assert r["speedup_iso_sram"] is None
            continue
        base = reference[(r["kernel"], "enzyme", bigger[0], 0)]["report"]
        assert r["speedup_iso_sram"] == base["cycles"] / r["report.cycles"]
    assert any(r["speedup_iso_sram"] is not None for r in rows)
    # One compile per (kernel, pipeline): the Enzyme-layout, regions-only and ideal-tape
    # pipelines ignore the pass options and the machine; TapeFlow's cost model decides for
    # the machine: 2 kernels x (3 + 3 spm-bytes x 2 l2.size TapeFlow pipelines).
    assert stats.compiles_run == 18
    assert len({r["ir_sha256"] for r in rows}) <= 18
    assert stats.simulations_run == len({r["sim_key"] for r in rows})


def test_worker_killed_mid_sweep(cluster: Any, spec_file: Path, tmp_path: Path,
                                 full_run: tuple[Path, SweepStats]) -> None:  # fmt: skip
    killed: list[tuple[int, int, int]] = []

    with Pool(scheduler=cluster.scheduler_address) as pool:
        def kill_one(point: Point, stats: SweepStats) -> None:
            if killed:
                return
            busy = pool.client.processing()
            addr = max(busy, key=lambda a: len(busy[a]))
            pid = pool.client.run(os.getpid, workers=[addr])[addr]
            os.kill(pid, signal.SIGKILL)
            killed.append((pid, stats.rows, len(busy[addr])))

        stats = run_sweep(load_spec(spec_file), tmp_path, pool, progress=False,
                                on_point=kill_one)  # fmt: skip
    assert killed
    pid, rows_then, tasks_then = killed[0]
    assert rows_then < 12 * len(VARIANTS)  # the sweep was not over
    assert tasks_then >= 1  # and the killed worker was running tasks
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert stats.errors == 0
    rows = _rows(tmp_path)
    assert len(rows) == 12 * len(VARIANTS)
    assert Counter((r["point_id"], r["variant"]) for r in rows).most_common(1)[0][1] == 1
    assert rows == _rows(full_run[0])


def test_resume_after_interrupt(cluster: Any, spec_file: Path, tmp_path: Path,
                                full_run: tuple[Path, SweepStats]) -> None:  # fmt: skip
    class Stop(Exception):
        pass

    def stop_after_five(point: Point, stats: SweepStats) -> None:
        if stats.rows >= 5 * len(VARIANTS):
            raise Stop

    spec = load_spec(spec_file)
    with Pool(scheduler=cluster.scheduler_address) as pool, pytest.raises(Stop):
        run_sweep(spec, tmp_path, pool, progress=False, on_point=stop_after_five)
    assert not (tmp_path / RESULTS).exists()  # interrupted before the merge
    partial = read_results(tmp_path).to_pylist()
    done = {r["point_id"] for r in partial}
    # What the CLI prints on Ctrl-C names the points that are kept (issue 22 item 7: it
    # used to point at OUT/parts/ before any existed).
    assert f"interrupted: {len(done)} of 12 points finished and are kept in {tmp_path}" in (
        interrupted_message(tmp_path, spec))
    assert "nothing is kept" in interrupted_message(tmp_path / "empty", spec)
    assert 5 <= len(done) < 12
    assert len(partial) == len(VARIANTS) * len(done)
    first_sims = len(list((tmp_path / "cache" / "sim").rglob("*.json")))

    with Pool(scheduler=cluster.scheduler_address) as pool:
        stats = run_sweep(spec, tmp_path, pool, progress=False)
    assert stats.points_skipped == len(done)
    assert stats.rows == len(VARIANTS) * (12 - len(done))
    # nothing simulated twice: the first run's simulations came from the cache
    assert first_sims + stats.simulations_run == full_run[1].simulations_run
    assert _rows(tmp_path) == _rows(full_run[0])


def test_one_more_machine_value_simulates_only_new_points(
    tmp_path: Path, full_run: tuple[Path, SweepStats]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(full_run[0], out)
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(SPEC.replace(str(list(L2)), str([*L2, 524288])))
    with Pool(workers=1) as pool:  # in process: the same engine without Dask
        stats = run_sweep(load_spec(spec_file), out, pool, progress=False)
    assert stats.points == 18
    assert stats.points_skipped == 12
    assert stats.compiles_run == 2 * len(SPM)  # TapeFlow's, for the new machine; no other
    assert stats.compiles_cached > 0
    rows = _rows(out)
    new = [r for r in rows if r["l2.size"] == 524288]
    assert len(rows) == 18 * len(VARIANTS)
    assert len(new) == 6 * len(VARIANTS)
    assert stats.simulations_run == len({r["sim_key"] for r in new})
    assert stats.simulations_cached == 0  # the new machine shares no simulation
    old = {(r["point_id"], r["variant"]): r for r in _rows(full_run[0])}
    assert [r for r in rows if r["l2.size"] != 524288] == list(old.values())


def test_plots_and_their_data(full_run: tuple[Path, SweepStats], tmp_path: Path) -> None:
    table = read_results(full_run[0])
    paths = write_sweep_plots(table, tmp_path, ["l2.size", "spm-bytes"])
    names = {p.name for p in paths}
    for stem in ("heatmap_speedup", "heatmap_energy_ratio_on_chip", "cycles_vs_sram", "pareto"):
        assert f"{stem}.png" in names
        assert (tmp_path / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = [r for r in table.to_pylist() if r["variant"] == "tapeflow"]
    with (tmp_path / "heatmap_speedup.csv").open() as f:
        cells = list(csv.DictReader(f))
    assert len(cells) == 2 * len(L2) * len(SPM)
    for c in cells:  # one row per cell here: the geomean is that row's speedup
        (r,) = [r for r in rows if r["kernel"] == c["kernel"]
                and r["l2.size"] == int(c["l2.size"]) and r["spm-bytes"] == int(c["spm-bytes"])]
        assert math.isclose(float(c["speedup"]), r["speedup"], rel_tol=1e-12)
    with (tmp_path / "pareto.csv").open() as f:
        front = list(csv.DictReader(f))
    both = [r for r in table.to_pylist() if r["variant"] in ("enzyme", "tapeflow")]
    for p in front:  # nothing beats a front point on both coordinates
        assert not any(r["kernel"] == p["kernel"] and r["sram_bytes"] <= int(p["sram_bytes"])
                       and r["report.cycles"] < float(p["cycles"]) for r in both)
        assert not any(r["kernel"] == p["kernel"] and r["sram_bytes"] < int(p["sram_bytes"])
                       and r["report.cycles"] <= float(p["cycles"]) for r in both)


def test_pareto_front() -> None:
    pts = [(4.0, 10.0), (1.0, 30.0), (2.0, 20.0), (2.0, 25.0), (8.0, 10.0), (16.0, 5.0)]
    assert pareto_front(pts) == [1, 2, 0, 5]


def test_spec_grid_with_machine_files_and_presets(tmp_path: Path) -> None:
    """Machines are presets or TOML files relative to the spec; every list is an axis."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "small-l2.toml").write_text("[l2]\nsize = 131072\n")
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text('kernels = "gemm"\nsizes = "small"\nseed = [0, 1]\n'
                         'machines = ["default-45nm", "dram-hbm2", "m/small-l2.toml"]\n'
                         '[pass]\ndepth = [2, 3]\n')  # fmt: skip
    spec = load_spec(spec_file)
    assert len(spec.points) == 3 * 2 * 2
    assert len({p.id for p in spec.points}) == 12
    by_machine = {p.columns["machine"]: p.machine for p in spec.points}
    assert by_machine["m/small-l2.toml"]["l2"]["size"] == 131072
    assert by_machine["default-45nm"]["l2"]["size"] != 131072
    assert by_machine["dram-hbm2"] != by_machine["default-45nm"]
    assert {p.depth for p in spec.points} == {2, 3}
    assert {p.spm_bytes for p in spec.points} == {by_machine["default-45nm"]["spm"]["size"]}


def test_cli_against_a_scheduler(cluster: Any, spec_file: Path, tmp_path: Path,
                                 full_run: tuple[Path, SweepStats],
                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """`--scheduler ADDRESS`: a finished sweep's rerun connects, skips every point, plots."""
    from tapeflow.tools.sweep import main

    out = tmp_path / "out"
    shutil.copytree(full_run[0], out)
    code = main([str(spec_file), "--scheduler", cluster.scheduler_address, "--out", str(out),
                 "--plot", str(tmp_path / "plots"), "--no-progress"])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0
    assert f"12 points (12 already in {out / RESULTS}), 0 rows written" in text
    assert f"({cluster.scheduler_address})" in text
    assert "plots: heatmap_speedup.png" in text
    assert _rows(out) == _rows(full_run[0])


def test_cycle_axes_are_readable(full_run: tuple[Path, SweepStats], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Cycles vs SRAM and the Pareto plot: no offset notation on the cycle axis (a 0.03%
    range drawn as a steep line under '+1.188e7'), legends outside the axes."""
    from matplotlib.figure import Figure

    seen: list[Any] = []
    original = Figure.savefig

    def savefig(fig: Any, *args: Any, **kwargs: Any) -> None:
        fig.canvas.draw()
        for ax in fig.axes:
            if ax.get_ylabel() == "cycles":
                legend = ax.get_legend().get_window_extent()
                seen.append((ax.yaxis.get_offset_text().get_text(),
                             legend.x0 >= ax.get_window_extent().x1))  # fmt: skip
        original(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    write_sweep_plots(read_results(full_run[0]), tmp_path, ["l2.size", "spm-bytes"])
    assert seen and all(offset == "" and outside for offset, outside in seen), seen
