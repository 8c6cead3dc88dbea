"""Suite shapes (issue 34): a triangular solve, a down-counting back substitution, a
while-loop Newton iteration and a branchy dynamic program, in MLIR and C. Each: the NumPy
loss, finite-difference gradients, gradients bit-identical at every stage and variant, in
the interpreter and natively, the C twin's bit-identical to the MLIR file's, and where
mode=always puts its tape bytes (`benchmarks/record_share.py`)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from helpers.paths import ROOT
from helpers.pipelines import apply, run
from helpers.runs import assert_same_run, copy_args

from benchmarks.record_share import record_share
from tapeflow import native, runner
from tapeflow.eval.jobs import VARIANTS, pipeline_spec
from tapeflow.eval.shapes import KERNELS

NAMES = sorted(KERNELS)
STAGES = (
    "tapeflow-autodiff",
    "tapeflow-autodiff,tapeflow-lower-tape",
    "tapeflow-autodiff,tapeflow-regions,tapeflow-lower-regions",
    "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=96},tapeflow-stream{depth=1}",
    "tapeflow-autodiff,tapeflow-regions,tapeflow-layers{spm-bytes=512 depth=4},"
    "tapeflow-stream{depth=4}",
    "tapeflow{mode=always spm-bytes=256}",
    "tapeflow{mode=always spm-bytes=256 cleanup=true}",
)
needs_c = pytest.mark.skipif(importlib.util.find_spec("clang") is None,
                             reason="the C frontend needs libclang (extra 'c')")  # fmt: skip


def _grad_args(name: str, seed: int = 1) -> list:
    return KERNELS[name].grad_arguments("small", seed)


def _float_grads(name: str, observed: list) -> list[np.ndarray]:
    """The shadows (d<arg>) of a `run` of `@<name>_grad` (results first: there are none)."""
    k = KERNELS[name]
    out, j = [], 0
    for spec in k.args:
        j += 1
        if spec.is_float:
            out.append(np.frombuffer(b"".join(observed[j]), dtype="<f8"))
            j += 1
    return out


def test_generated_files_are_the_generators_output():
    spec = importlib.util.spec_from_file_location(
        "shapes_generate", ROOT / "benchmarks" / "kernels" / "shapes" / "generate.py")
    generate = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(generate)  # type: ignore[union-attr]
    assert set(generate.TEMPLATES) == set(KERNELS)
    for name, k in KERNELS.items():
        for size in ("small", "default"):
            assert k.source(size) == generate.TEMPLATES[name](k.sizes[size]), (name, size)


@pytest.mark.parametrize("name", NAMES)
def test_loss_matches_numpy(name: str):
    k = KERNELS[name]
    arrays = k.inputs("small", seed=1)
    result = runner.run_function(k.load("small"), k.entry, copy_args(arrays))
    assert result.results[0] == pytest.approx(k.reference(*copy_args(arrays)), rel=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name: str):
    k = KERNELS[name]
    arrays = k.inputs("small", seed=2)
    observed = run(apply(k.source("small"), "tapeflow-autodiff"), k.grad_entry,
                   k.grad_arguments("small", 2))  # fmt: skip
    grads = _float_grads(name, observed)
    floats = [i for i, spec in enumerate(k.args) if spec.is_float]
    assert any(np.any(g != 0) for g in grads)
    for g, i in zip(grads, floats):
        a = arrays[i]
        for flat, idx in enumerate(np.ndindex(a.shape)):
            plus, minus = copy_args(arrays), copy_args(arrays)
            plus[i][idx] += 1e-6
            minus[i][idx] -= 1e-6
            fd = (k.reference(*plus) - k.reference(*minus)) / 2e-6
            assert g[flat] == pytest.approx(fd, rel=1e-5, abs=1e-7), (k.args[i].name, idx)


@pytest.mark.parametrize("name", NAMES)
def test_gradients_bit_identical_at_every_stage_and_variant(name: str):
    k = KERNELS[name]
    args = _grad_args(name)
    expected = run(apply(k.source("small"), STAGES[0]), k.grad_entry, args)
    variants = [pipeline_spec(v, 256, 0, 2, mode="always") for v in VARIANTS]
    for pipeline in (*STAGES[1:], *variants):
        assert run(apply(k.source("small"), pipeline), k.grad_entry, args) == expected, pipeline


@pytest.mark.skipif(not native.tools_available(), reason="upstream MLIR 22 is not installed")
@pytest.mark.parametrize("name", NAMES)
def test_gradients_natively(name: str):
    """Natively: the Enzyme layout's and TapeFlow's gradients bit for bit, and the
    interpreter's within the libm difference (`helpers.runs.RTOL`)."""
    k = KERNELS[name]
    args = _grad_args(name)
    base = apply(k.source("small"), STAGES[1])
    flow = apply(k.source("small"), "tapeflow{mode=always spm-bytes=256 cleanup=true}")
    want = native.run_function_native(base, k.grad_entry, copy_args(args))
    got = native.run_function_native(flow, k.grad_entry, copy_args(args))
    assert want.memref_positions == got.memref_positions
    for p in want.memref_positions:
        assert np.asarray(got.arguments[p]).tobytes() == np.asarray(want.arguments[p]).tobytes()
    assert_same_run(runner.run_function(flow, k.grad_entry, copy_args(args)), got)


@needs_c
@pytest.mark.parametrize("name", NAMES)
def test_c_twin_matches_the_mlir_file(name: str):
    """The C twin's signature and loss, and its gradient at every stage, equal the MLIR
    file's bit for bit (backsub's C loop counts down: the frontend lowers it to a while
    loop or to a normalised scf.for, the gradient is the same either way)."""
    k = KERNELS[name]
    c_text = str(k.load("small", str(k.c_twin)))
    assert (runner.find_function(runner.load_module(c_text), k.entry).function_type
            == runner.find_function(k.load("small"), k.entry).function_type)  # fmt: skip
    arrays = k.inputs("small", seed=3)
    losses = [runner.run_function(runner.load_module(t), k.entry, copy_args(arrays)).results
              for t in (c_text, k.source("small"))]  # fmt: skip
    assert losses[0] == losses[1]
    args = k.grad_arguments("small", 3)
    expected = run(apply(k.source("small"), STAGES[0]), k.grad_entry, args)
    for pipeline in (STAGES[0], STAGES[2], "tapeflow{mode=always spm-bytes=256}"):
        assert run(apply(c_text, pipeline), k.grad_entry, args) == expected, pipeline


@pytest.mark.parametrize("name", NAMES)
def test_tape_bytes_in_records(name: str):
    """mode=always puts at least 90% of the tape bytes in records (newton's while loop:
    a growable record tape), and keeps no cache in Enzyme's layout."""
    share = record_share(KERNELS[name], "small")
    assert share.share >= 0.9 and not share.kept, share


def test_bench_suite_shapes():
    """`tapeflow-bench --suite shapes` runs the four as `shapes/<name>`, a kernel also by
    its bare name, and `--suite all` leaves them out (the published runs keep their
    kernels); a job carries its kernel (hashed and pickled)."""
    import pickle

    from tapeflow.eval.kernels import kernel_table

    table = kernel_table(None, "shapes", (), "small")
    assert list(table) == [f"shapes/{n}" for n in KERNELS]
    assert kernel_table("dp", "shapes", (), "small") == {"shapes/dp": table["shapes/dp"]}
    assert not any(label.startswith("shapes/") for label in kernel_table(None, "all", (), "small"))
    for suite, kernel, twin in table.values():
        assert (suite, twin) == ("shapes", "")
        assert pickle.loads(pickle.dumps(kernel)) == kernel and hash(kernel)


@pytest.mark.slow
def test_bench_runs_suite_shapes(tmp_path, capsys):
    from tapeflow.tools import bench

    status = bench.main(["--suite", "shapes", "--kernels", "dp", "--quick", "--machine",
                         "accel-salam", "--jobs", "1", "--no-plots", "--no-progress",
                         "--out", str(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert "## tapeflow-bench: suite shapes, small sizes" in out
    assert "| shapes/dp |" in out and "bit-identical" in out
