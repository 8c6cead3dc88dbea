"""tapeflow-bench: end to end on small kernels, plus the pieces that decide pass/fail."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tapeflow.eval.jobs import (
    DEFAULT_SWEEP,
    MACHINES,
    SPM_SWEEP,
    VARIANTS,
    Job,
    baselines,
    build_module,
    kernel_arguments,
)
from tapeflow.eval.bundled import SOURCE_TREE
from tapeflow.eval.run import compare_gradients, run_job, run_jobs_shared
from tapeflow.eval.summary import cache_needed, default_sweep, geomean
from tapeflow.hwmodel.config import load_machine
from tapeflow.tools import bench

from helpers.cli import run_main

COLUMNS = (
    "kernel", "tape (Enzyme)", "tape (TapeFlow)", "tape / L2", "inflation", "Enzyme cycles",
    "regions speedup",
    "TapeFlow speedup", "iso-SRAM speedup", "on-chip energy", "on-chip mem. energy",
    "total energy", "Enzyme SRAM needed", "TapeFlow SRAM needed", "TapeFlow SPM needed",
    "TapeFlow SPM high-water",
    "SRAM ratio", "gradients",
)  # fmt: skip


def _bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tapeflow.tools.bench", *args],
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.fixture(scope="module")
def quick_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    pytest.importorskip("dask.distributed", reason="--jobs 2 needs Dask (extra 'sweep')")
    pytest.importorskip("matplotlib", reason="the plots need matplotlib (extra 'bench')")
    out = tmp_path_factory.mktemp("bench")
    proc = _bench("--quick", "--kernels", "gemm,softmax_ce,pairwise", "--jobs", "2",
                  "--machine", "all", "--out", str(out / "o"),
                  "--json", str(out / "r.json"), "--timings", "--spm-sweep")  # fmt: skip
    return out, proc


@pytest.mark.slow
def test_quick_end_to_end(quick_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, proc = quick_run
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| kernel |"))
    cells = [c.strip() for c in lines[start].strip("|").split("|")]
    assert tuple(cells) == COLUMNS
    table = lines[start + 2 : lines.index("", start)]
    rows = {line.split("|")[1].strip(): line for line in table}
    assert len(rows) == 4  # three kernels and the geomean
    assert "gemm" in rows
    assert "softmax_ce" in rows
    assert "pairwise (control)" in rows
    for name in ("gemm", "softmax_ce", "pairwise (control)"):
        assert rows[name].rstrip().endswith("| bit-identical |"), rows[name]
    assert "excluded from the geomeans" in text
    assert "pairwise" in text
    assert "last-level cache" in text
    assert "(2 kernels)" in table[-1]
    assert "machine `default-45nm`" in text and "machine `accel-salam`" in text
    assert table[-1].startswith("| **geomean**")

    everything = json.loads((out / "r.json").read_text())
    assert everything == json.loads((out / "o" / "results.json").read_text())
    assert everything["header"]["machines"] == list(MACHINES)
    assert [d["header"]["machine_name"] for d in everything["machines"]] == list(MACHINES)
    assert set(everything["summary"]) == set(MACHINES)
    # One table per machine, then the summary with one row per machine.
    assert text.count("| kernel | tape (Enzyme) |") == len(MACHINES)
    summary = text[text.index("## Summary"):].splitlines()
    assert [line.split("|")[1].strip() for line in summary if line.startswith("| `")] == [
        f"`{m}`" for m in MACHINES]
    data = everything["machines"][0]
    kernels = {k["kernel"]: k for k in data["kernels"]}
    assert set(kernels) == {"gemm", "softmax_ce", "pairwise"}
    assert all(k["gradients_identical"] for k in kernels.values())
    assert kernels["pairwise"]["control"]
    assert not kernels["gemm"]["control"]
    assert data["geomean"]["kernels"] == ["gemm", "softmax_ce"]
    g = kernels["gemm"]
    assert g["tape_bytes"] > 0
    # Small sizes: the tape fits the L1 share, so TapeFlow's cost model keeps Enzyme's
    # layout (docs/CONTRACTS.md, "The cost model of mode=auto"): no scratchpad used.
    assert g["sram"]["tapeflow_spm_high_water_bytes"] == 0
    assert set(g["variants"]) == {*VARIANTS, *baselines()[0]}  # Enzyme-MLIR's, with its extra
    assert g["speedup"]["tapeflow"] == pytest.approx(
        g["variants"]["enzyme"]["cycles"] / g["variants"]["tapeflow"]["cycles"])
    assert {p["l2_bytes"] for p in g["sweep"]} == set(DEFAULT_SWEEP)
    assert {p["l2_bytes"] for p in g["sweep_tapeflow"]} == set(DEFAULT_SWEEP)
    # Whole-chip SRAM (issue 18): L1 + L2 + the scratchpad's capacity for TapeFlow, L1 + L2
    # for the Enzyme layout (which never touches the scratchpad), from the machine table.
    # At these sizes the cost model keeps Enzyme's layout: TapeFlow's program has no
    # scratchpad either.
    m = data["machine"]
    spm = m["spm"]["size"] if g["sram"]["tapeflow_spm_high_water_bytes"] else 0
    assert g["sram"]["enzyme_on_chip_bytes"] == m["l1"]["size"] + m["l2"]["size"]
    assert g["sram"]["tapeflow_on_chip_bytes"] == m["l1"]["size"] + m["l2"]["size"] + spm
    assert g["sram"]["tapeflow_total_needed_bytes"] == (
        g["sram"]["tapeflow_cache_needed_bytes"] + spm)
    assert g["sram"]["ratio"] == pytest.approx(
        g["sram"]["enzyme_cache_needed_bytes"] / g["sram"]["tapeflow_total_needed_bytes"])
    # The scratchpad sweep (issue 29 item 5): the same program at every scratchpad here,
    # so the smallest is needed, and unused.
    assert data["header"]["spm_sweep"] == list(SPM_SWEEP)
    assert [p["spm_bytes"] for p in g["spm_sweep"]] == list(SPM_SWEEP)
    assert g["sram"]["tapeflow_spm_needed_bytes"] == 512
    assert not g["sram"]["tapeflow_spm_needed_used"]
    # iso-SRAM: the Enzyme layout at the smallest swept L1 + L2 >= TapeFlow's whole SRAM.
    target = g["sram"]["tapeflow_on_chip_bytes"]
    point = min((p for p in g["sweep"] if p["cache_bytes"] >= target),
                key=lambda p: p["cache_bytes"])
    assert g["speedup"]["tapeflow_iso_sram"] == pytest.approx(
        point["cycles"] / g["variants"]["tapeflow"]["cycles"])
    assert data["geomean"]["speedup_tapeflow_iso_sram"] is not None
    assert "TapeFlow speedup (iso-SRAM)" in text
    e, t = g["sram"]["iso_enzyme_sram_bytes"], g["sram"]["iso_tapeflow_sram_bytes"]
    if e is None or t is None:
        assert g["sram"]["iso_ratio"] is None
    else:
        assert g["sram"]["iso_ratio"] == pytest.approx(e / t)
    assert "### Whole on-chip SRAM" in text
    assert "### On-chip SRAM for the same cycles" in text
    assert all(r["path"] == "fast" for r in data["runs"])
    accel = {k["kernel"]: k for k in everything["machines"][1]["kernels"]}
    assert {p["l2_bytes"] for p in accel["gemm"]["sweep"]} == set(
        default_sweep(load_machine("accel-salam")))
    for m in MACHINES:
        for png in ("speedup", "energy", "sram"):
            path = out / "o" / f"{png}-{m}.png"
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    assert (out / "o" / "results.md").read_text() == proc.stdout
    # --timings: phases, the CPU of the driver and of both Dask workers, every task.
    assert "timings: wall seconds by phase" in proc.stderr
    cpu = re.search(r"driver .* ([\d.]+), workers ([\d.]+) \(in tasks ([\d.]+)", proc.stderr)
    assert cpu is not None, proc.stderr
    assert float(cpu.group(2)) >= float(cpu.group(3)) > 0
    assert len(re.findall(r"^  (gemm|softmax_ce|pairwise) +pid ", proc.stderr,
                          re.M)) == 3 * len({*VARIANTS, *baselines()[0]})  # per kernel, variant
    assert proc.stderr.count("busy wall seconds per worker") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kernels", "gemm,nosuch"), "valid kernels: gemm, mlp"),
        (("--kernels", ","), "valid kernels:"),
        (("--set", "l2.nosuch=1"), "unknown machine key 'l2.nosuch'"),
        (("--sweep", "48"), "not a positive power of two"),
        (("--depth", "0"), "depth must be >= 1"),
    ],
)
def test_usage_errors(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    proc = run_main(bench.main, ["--quick", "--out", str(tmp_path), *args])
    assert proc.returncode == 1
    assert message in proc.stderr
    assert proc.stderr.startswith("error: ")
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_help() -> None:
    proc = run_main(bench.main, ["--help"])
    assert proc.returncode == 0
    for word in ("--quick", "--kernels", "--jobs", "--json", "--out", "--machine", "--set",
                 "--sweep", "bit-identical", "controls", "exit status"):  # fmt: skip
        assert word in proc.stdout, word


# -- the pieces that decide pass/fail -----------------------------------------------------


def _fake(grads: dict[str, np.ndarray]) -> dict[str, object]:
    return {"grads": {k: v.copy() for k, v in grads.items()}}


def test_compare_gradients_is_bitwise() -> None:
    g = {"A": np.array([1.0, -2.0, 3.5]), "dA": np.array([0.25, 0.0, -1.0])}
    same = {v: _fake(g) for v in VARIANTS}
    assert compare_gradients(same) == (True, [])
    off = {v: _fake(g) for v in VARIANTS}
    off["tapeflow"]["grads"]["dA"][1] = -0.0  # equal as floats, not as bits
    ok, notes = compare_gradients(off)
    assert not ok
    assert "tapeflow: dA differs" in notes[0]
    assert "1 of 3 elements" in notes[0]
    off = {v: _fake(g) for v in VARIANTS}
    off["regions"]["grads"]["dA"][2] = np.nextafter(-1.0, 0.0)
    ok, notes = compare_gradients(off)
    assert not ok
    assert notes[0].startswith("regions: dA differs")
    missing = {v: _fake(g) for v in VARIANTS}
    del missing["regions"]["grads"]["A"]
    assert compare_gradients(missing)[0] is False


def test_compare_gradients_counts_elements_and_names_the_first() -> None:
    """Two bytes of one element are one element; another run beside the variants (the
    same variant with other options) is compared too."""
    g = {"dA": np.array([[1.0, -2.0], [3.5, 0.5]]), "result0": np.array(0.25)}
    off = {v: _fake(g) for v in (*VARIANTS, "tapeflow mode=always")}
    moved = (np.array([3.5]).view(np.uint64) ^ 0x0101).view(np.float64)[0]  # 2 low bytes
    off["tapeflow mode=always"]["grads"]["dA"][1, 0] = moved
    off["tapeflow mode=always"]["grads"]["dA"][1, 1] = -0.5
    off["tapeflow mode=always"]["grads"]["result0"] = np.array(0.5)
    ok, notes = compare_gradients(off)
    assert not ok
    assert notes[0] == ("tapeflow mode=always: dA differs from the Enzyme layout's in 2 of "
                        f"4 elements (max |diff| 1; first dA[1][0]: {float(moved)!r}, "
                        "Enzyme 3.5)")  # fmt: skip
    assert notes[1].startswith("tapeflow mode=always: result0 differs from the Enzyme "
                               "layout's in 1 of 1 elements (max |diff| 0.25; first result0: ")


def test_cache_needed() -> None:
    sweep = [{"l2_bytes": c, "cache_bytes": c + 1, "cycles": cyc}
             for c, cyc in ((1, 200.0), (2, 104.0), (4, 101.0), (8, 100.0))]  # fmt: skip
    need = cache_needed(sweep, 0.05)
    assert need["l2_bytes"] == 2
    assert need["best_cycles"] == 100.0
    assert not need["at_smallest"]
    assert cache_needed(sweep, 0.0)["l2_bytes"] == 8
    assert cache_needed(sweep, 1.0)["at_smallest"]


def test_sweep_matches_op_by_op_runs() -> None:
    """Each point of the sweep (one run, several machines) equals the op-by-op model's
    run on a machine with that L2; the sweep sees the capacity."""
    from tapeflow.hwmodel.config import load_machine
    from tapeflow.simulate import simulate
    from tapeflow.transforms.autodiff import AutodiffPass  # noqa: F401  (registered)

    sets = ["l1.size=512", "l1.assoc=2", "l2.assoc=4", "l2.size=2048"]
    raw = load_machine(None, sets).raw
    sweep = (256, 512, 1024, 2048, 4096)
    job = Job("mass_spring", "enzyme", size="small", machine=raw, sweep=sweep)
    res = run_job(job)
    assert res["error"] is None, res.get("traceback")
    assert res["path"] == "fast"
    cycles = [p["cycles"] for p in res["sweep"]]
    assert len(set(cycles)) > 1
    module = build_module(job)
    for p in res["sweep"]:
        machine = load_machine(None, [*sets, f"l2.size={p['l2_bytes']}"])
        args = kernel_arguments("mass_spring", "small")
        r = simulate(module, "mass_spring_grad", args, machine).report
        assert p["cycles"] == r["cycles"], p
        assert p["dram_bytes"] == r["dram"]["bytes_read"] + r["dram"]["bytes_written"]
        assert p["cache_bytes"] == 512 + p["l2_bytes"]
        if p["l2_bytes"] == 2048:
            assert res["report"]["cycles"] == r["cycles"]


def _same_result(shared: dict[str, Any], alone: dict[str, Any]) -> None:
    assert shared["error"] is None and alone["error"] is None, (shared, alone)
    assert shared["report"] == alone["report"]
    assert shared["sweep"] == alone["sweep"]
    assert shared["grads"].keys() == alone["grads"].keys()
    for k, a in alone["grads"].items():
        assert shared["grads"][k].tobytes() == a.tobytes(), k


def test_shared_runs_equal_separate_runs() -> None:
    """One kernel's jobs on two machines (what `tapeflow-bench --machine all` gives one
    task): one run per distinct program serves every machine and sweep point, and each
    job's result is the one it gets alone."""
    machines = [load_machine(name) for name in MACHINES]
    jobs = [Job("mass_spring", v, size="small", machine=m.raw, machine_label=label,
                      sweep=(8192, 65536, m.l2.size) if v != "regions" else ())
            for m, label in zip(machines, MACHINES, strict=True)
            for v in VARIANTS]  # fmt: skip
    task = run_jobs_shared(jobs)
    assert len(task["runs"]) == len(VARIANTS)  # one per variant, not per (variant, machine)
    assert {r["machines"] for r in task["runs"]} == {2, 6}  # own L2 and 2 more, x2
    assert [(r["variant"], r["machine"]) for r in task["results"]] == [
        (j.variant, j.machine_label) for j in jobs]
    for job, shared in zip(jobs, task["results"], strict=True):
        _same_result(shared, run_job(job))
        assert len(shared["shared_with"]) == 1


def test_controls_share_one_run() -> None:
    """A kernel that caches nothing compiles to the same IR in the Enzyme-layout,
    regions-only and ideal-tape variants: one run. TapeFlow's pipeline hoists index arithmetic (cse, licm)
    before forming regions, which orders the same ops differently: its own run, with the
    same instructions and cycles."""
    jobs = [Job("pairwise", v, size="small") for v in VARIANTS]
    task = run_jobs_shared(jobs)
    assert [r["jobs"] for r in task["runs"]] == [
        ["default/enzyme", "default/regions", "default/ideal-tape"], ["default/tapeflow"]]
    for job, shared in zip(jobs, task["results"], strict=True):
        _same_result(shared, run_job(job))
    reports = [r["report"] for r in task["results"]]
    assert len({(r["cycles"], r["ops"]["instructions"], r["tape_bytes"]) for r in reports}) == 1


def test_shared_run_failure_stays_with_its_job() -> None:
    """A machine whose scratchpad cannot hold TapeFlow's tiles fails its own job only,
    as it would alone; the other machine's job of the same program still runs."""
    small = load_machine(None, ["spm.size=256"])  # the small kernel's tiles take 768 B
    ok = Job("mass_spring", "tapeflow", size="small", machine_label="default",
                   mode="always")  # fmt: skip
    # compiled for the default machine's scratchpad (the same program), run on the small one
    bad = Job("mass_spring", "tapeflow", size="small", machine=small.raw,
                    machine_label="tiny-spm", mode="always", spm_bytes=32768)  # fmt: skip
    task = run_jobs_shared([ok, bad])
    good, failed = task["results"]
    _same_result(good, run_job(ok))
    assert failed["machine"] == "tiny-spm"
    assert failed["error"] == run_job(bad)["error"]
    assert "scratchpad overflow" in failed["error"]


def test_tasks_longest_first() -> None:
    """One task per kernel, longest first, when every worker gets two or more; else one
    per (kernel, variant), so that a short kernel list still keeps every worker busy."""
    from tapeflow.eval.run import KERNEL_CPU_S, kernel_tasks

    jobs = [Job(k, v, machine_label=m) for m in MACHINES
            for k in ("pairwise", "mlp", "gemm", "lstm") for v in VARIANTS]  # fmt: skip
    tasks = kernel_tasks(jobs, workers=2)
    assert [t[0].kernel for t in tasks] == ["mlp", "lstm", "gemm", "pairwise"]
    assert all(len(t) == 2 * len(VARIANTS) and {j.kernel for j in t} == {t[0].kernel}
               for t in tasks)  # fmt: skip
    assert KERNEL_CPU_S["mlp"] > KERNEL_CPU_S["lstm"] > KERNEL_CPU_S["gemm"]
    tasks = kernel_tasks(jobs, workers=3)
    assert [(t[0].kernel, t[0].variant) for t in tasks[:3]] == [
        ("mlp", "enzyme"), ("mlp", "tapeflow"), ("mlp", "regions")]
    assert len(tasks) == 4 * len(VARIANTS)
    assert all({j.machine_label for j in t} == set(MACHINES) for t in tasks)


def test_geomean_excludes_controls() -> None:
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([None, 0.0]) is None


def test_gradient_mismatch_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A variant whose gradient differs in one bit: the table says so, exit status 1."""
    from tapeflow.eval import run as eval_run
    from tapeflow.tools import bench as cli

    real = run_jobs_shared

    def corrupt(jobs: list[Job]) -> dict[str, Any]:
        out = real(jobs)
        for r in out["results"]:
            if r["variant"] == "tapeflow":
                r["grads"]["dA"].view(np.uint64)[0, 0] ^= 1
        return out

    monkeypatch.setattr(eval_run, "run_jobs_shared", corrupt)
    status = cli.main(["--quick", "--kernels", "gemm", "--jobs", "1", "--no-progress",
                       "--no-plots", "--sweep", "none", "--machine", "default-45nm",
                       "--out", str(tmp_path)])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 1
    assert "| **DIFFER** |" in out
    assert "tapeflow: dA differs from the Enzyme layout's in 1 of 15 elements" in out
    assert "error: gemm: gradients differ across variants" in err
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["machines"][0]["kernels"][0]["gradients_identical"] is False


def test_package_imports_nothing_from_benchmarks() -> None:
    """The kernel registry lives in the package: no module under tapeflow/ (nor the
    hardware model, dialects, transforms) imports `benchmarks` or edits `sys.path`."""
    import ast

    root = SOURCE_TREE
    offenders = []
    for folder in ("tapeflow", "hwmodel", "dialects", "transforms"):
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(n == "benchmarks" or n.startswith("benchmarks.") for n in names):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
                if (isinstance(node, ast.Attribute) and node.attr == "path"
                        and isinstance(node.value, ast.Name) and node.value.id == "sys"):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno} sys.path")
    assert offenders == []


@pytest.mark.slow
def test_scripts_bench_out_is_relative_to_the_caller(tmp_path: Path) -> None:
    """`scripts/bench --out rel` writes under the caller's directory (issue 22 item 10:
    it used to land in the repository root)."""
    script = SOURCE_TREE / "scripts" / "bench"
    proc = subprocess.run(
        ["bash", str(script), "--quick", "--kernels", "pairwise", "--machine", "default-45nm",
         "--jobs", "1", "--sweep", "none", "--no-plots", "--no-progress", "--out", "rel"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rel" / "results.json").is_file()
    # scripts/bench turns the scratchpad sweep on (issue 29 item 5).
    header = json.loads((tmp_path / "rel" / "results.json").read_text())["header"]
    assert header["spm_sweep"] == list(SPM_SWEEP)


def _standin_suite(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sizes: dict) -> None:
    """Suite salam replaced by one stand-in kernel `chain` (chain.c in `tmp_path`, written
    by the caller, as `$TAPEFLOW_SALAM`) at `sizes`, in the form of `suites.KERNELS`."""
    from tapeflow.eval import suites
    from tapeflow.eval.bundled import ArgSpec

    chain = suites.SalamKernel(
        name="chain", entry="chain", theirs="", commit="", sizes=sizes,
        args=(ArgSpec("x", "input", lambda s: (s["N"],)),),
        make=lambda s, rng: [rng.uniform(-1, 1, s["N"])],
        reference=lambda s, x: 0.0, csv="logsum",
    )  # fmt: skip
    monkeypatch.setattr(suites, "KERNELS", {"chain": chain})
    monkeypatch.setenv("TAPEFLOW_SALAM", str(tmp_path))


def test_suite_kernels_take_their_bench_sizes(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A suite kernel runs at its `bench` sizes when it names them (one too slow at the
    paper's `real` sizes for the full bench), else at `real`; --quick at `small`."""
    from tapeflow.eval import kernels

    _standin_suite(monkeypatch, tmp_path,
                   {"real": {"N": 64}, "bench": {"N": 16}, "small": {"N": 4}})  # fmt: skip
    [k] = kernels.salam_suite().values()
    assert (k.size("default"), k.size("small")) == ("bench", "small")
    assert k.primal_bytes("default") == 8 * 16
    assert [a.shape for a in k.grad_arguments("small")[:2]] == [(4,), (4,)]
    assert k.argument_names() == ["x", "dx", "seed"]


def test_suite_salam_without_its_folder_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """No folder for suite salam's files: one error naming the folder it looked in."""
    from tapeflow.diagnostics import ToolError
    from tapeflow.eval import kernels

    monkeypatch.setenv("TAPEFLOW_SALAM", str(tmp_path / "nowhere"))
    with pytest.raises(ToolError, match="suite salam: no folder .*nowhere"):
        kernels.salam_suite()


def test_kernel_dir_says_where_it_looked(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The kernel folder's one rule: `$TAPEFLOW_KERNELS`, else the source tree's
    benchmarks/kernels; neither a folder (a wheel without TAPEFLOW_KERNELS): one error
    naming where it looked."""
    from tapeflow.diagnostics import ToolError
    from tapeflow.eval import bundled

    monkeypatch.delenv("TAPEFLOW_KERNELS", raising=False)
    assert bundled.kernel_dir() == SOURCE_TREE / "benchmarks" / "kernels"
    monkeypatch.setenv("TAPEFLOW_KERNELS", str(tmp_path / "k"))
    with pytest.raises(ToolError, match=r"no kernel folder: looked in \$TAPEFLOW_KERNELS"):
        bundled.kernel_dir()
    monkeypatch.delenv("TAPEFLOW_KERNELS")
    monkeypatch.setattr(bundled, "SOURCE_TREE", tmp_path / "site-packages")
    with pytest.raises(ToolError, match="site-packages.*TAPEFLOW_KERNELS is not set"):
        bundled.kernel_dir()


@pytest.mark.slow
def test_suite_salam_puts_gem5_salams_speedup_beside_ours(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """Suite salam (a stand-in kernel and result CSV written here, in the form of
    benchmarks/kernels/salam/): its own table, and per kernel our speedup at the 16 KiB
    cluster cache beside gem5-SALAM's orig/ad from the CSV."""
    from tapeflow.tools import bench as cli

    pytest.importorskip("clang.cindex", reason="suite salam is C: it needs libclang (extra 'c')")

    (tmp_path / "chain.c").write_text(
        "double tanh(double);\n"
        "double chain(double x[N]) { double s = 0.0;\n"
        "  for (int i = 0; i < N; i++) s = tanh(s + x[i]);\n  return s * s; }\n"
        "void g(double *x, double *dx) { __enzyme_autodiff((void *)chain, enzyme_dup, x, dx); }\n")
    _standin_suite(monkeypatch, tmp_path, {"real": {"N": 64}, "small": {"N": 8}})
    cols = "benchmark,variant,accounting,cache_bytes,total_cycles"
    (tmp_path / "gem5_salam_results.csv").write_text(
        f"# stand-in\n{cols}\nlogsum,orig,total,16384,300\nlogsum,ad,total,16384,200\n"
        "logsum,orig,pure,16384,1\nlogsum,ad,total,8192,7\n")
    status = cli.main(["--suite", "salam", "--quick", "--machine", "accel-salam", "--jobs", "1",
                       "--no-plots", "--no-progress", "--out", str(tmp_path / "o")])  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "## tapeflow-bench: suite salam, small sizes, machine `accel-salam`" in out
    data = json.loads((tmp_path / "o" / "results.json").read_text())["machines"][0]
    [row] = data["salam_comparison"]
    assert row["speedup_gem5_salam"] == pytest.approx(300 / 200)
    [k] = data["kernels"]
    e = {p["l2_bytes"]: p["cycles"] for p in k["sweep"]}[16384]
    t = {p["l2_bytes"]: p["cycles"] for p in k["sweep_tapeflow"]}[16384]
    assert row["speedup_ours"] == pytest.approx(e / t)
    assert f"| salam/chain | logsum | {e / t:.2f}x | 1.50x |" in out
    v = k["variants"]  # like for like with their ad (a free tape): at the machine's L2
    assert row["speedup_ideal_ours"] == v["enzyme"]["cycles"] / v["ideal-tape"]["cycles"] > 1
