"""tapeflow-bench's `enzyme-mlir` variant: real Enzyme-MLIR's gradient, on by default,
checked against ours by relative error; skipped, naming the extra, when it is not
installed; off with --no-enzyme-mlir."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tapeflow.baselines import enzyme_mlir
from tapeflow.eval import jobs, summary
from tapeflow.eval.jobs import Job
from tapeflow.eval.markdown import real_enzyme_markdown
from tapeflow.eval.run import run_job
from tapeflow.eval.summary import baseline_agreement, summarize_kernel
from tapeflow.hwmodel.config import load_machine
from tapeflow.tools import bench

pytestmark = pytest.mark.enzyme

needs_enzyme = pytest.mark.skipif(
    not enzyme_mlir.available(),
    reason="needs the optional extra `enzyme` (pip install --no-deps enzyme-ad==0.0.16)",
)


def test_without_the_extra_the_variant_is_skipped_naming_it(monkeypatch):
    monkeypatch.setattr(enzyme_mlir, "_library_path", lambda: None)
    base = ["--quick", "--kernels", "gemm", "--machine", "default-45nm", "--no-plots"]
    args, *_, planned = bench.plan(base)
    assert {j.variant for j in planned} == set(jobs.VARIANTS)
    assert len(args.skipped) == 1 and "optional extra `enzyme`" in args.skipped[0]
    args, *_, planned = bench.plan([*base, "--no-enzyme-mlir"])  # not asked: nothing said
    assert {j.variant for j in planned} == set(jobs.VARIANTS) and args.skipped == []


def test_on_by_default_off_when_asked(monkeypatch):
    monkeypatch.setattr(enzyme_mlir, "_library_path", lambda: Path("enzyme_call.so"))
    base = ["--quick", "--kernels", "gemm", "--machine", "default-45nm"]
    args, *_, planned = bench.plan(base)
    assert {j.variant for j in planned} == {*jobs.VARIANTS, "enzyme-mlir"}
    assert args.skipped == []
    args, *_, planned = bench.plan([*base, "--no-enzyme-mlir"])
    assert {j.variant for j in planned} == set(jobs.VARIANTS) and args.skipped == []


def test_agreement_is_normwise_per_array_with_the_entries_beside_it():
    ours = {"dA": np.array([1.0, 0.0, 2.0, 1e-8])}
    close = {"error": None, "grads": {"dA": np.array([1.0 + 1e-15, 0.0, 2.0, 1e-8])}}
    far = {"error": None, "grads": {"dA": np.array([1.0, 0.0, 2.0 + 1e-9, 1e-8])}}
    assert baseline_agreement("enzyme-mlir", close, {"grads": ours})["agrees"]
    b = baseline_agreement("enzyme-mlir", far, {"grads": ours})
    assert not b["agrees"] and b["max"] == pytest.approx(5e-10, rel=1e-3)
    # A cancelling sum's entry, 8 orders below the array's largest: 1e-6 of itself is
    # 5e-15 of the array's scale, so it agrees; the per-entry figure still says 1e-6.
    cancel = {"error": None, "grads": {"dA": np.array([1.0, 0.0, 2.0, 1e-8 * (1 + 1e-6)])}}
    b = baseline_agreement("enzyme-mlir", cancel, {"grads": ours})
    assert b["agrees"] and b["max"] == pytest.approx(5e-15, rel=1e-3)
    assert b["max_entry"] == pytest.approx(1e-6, rel=1e-3)
    # Ours all zero and theirs not: no scale to be within, so it differs.
    zero = {"error": None, "grads": {"dA": np.array([0.0, 0.0, 1e-300, 0.0])}}
    b = baseline_agreement("enzyme-mlir", zero, {"grads": {"dA": np.zeros(4)}})
    assert not b["agrees"] and b["max"] == float("inf")
    refused = baseline_agreement("enzyme-mlir", {"error": "PassFailedException: no"}, None)
    assert refused["refused"] == "PassFailedException: no"


def test_agreement_takes_nan_in_both_as_the_same_value():
    """salam/matd at its real size: 0 * a product that overflows, a gradient all NaN in
    both programs, bit for bit: they agree. A NaN or an infinity on one side only does not;
    nor does ours all zeros against theirs not."""
    nan, inf = float("nan"), float("inf")
    ours = {"dA": np.array([nan, 1.0, 2.0])}
    same = {"error": None, "grads": {"dA": np.array([nan, 1.0, 2.0])}}
    b = baseline_agreement("enzyme-mlir", same, {"grads": ours})
    assert b["agrees"] and b["max"] == 0.0 and b["max_entry"] == 0.0
    for theirs in ([1.0, 1.0, 2.0], [nan, inf, 2.0], [nan, 1.0, nan]):
        run = {"error": None, "grads": {"dA": np.array(theirs)}}
        b = baseline_agreement("enzyme-mlir", run, {"grads": ours})
        assert not b["agrees"] and b["max"] == inf, theirs
    zeros = {"dA": np.zeros(2)}
    run = {"error": None, "grads": {"dA": np.array([0.0, 1e-300])}}
    assert not baseline_agreement("enzyme-mlir", run, {"grads": zeros})["agrees"]


def _row(kernel: str, mlir_result: dict):
    results = {v: run_job(Job(kernel, v, "small")) for v in jobs.VARIANTS}
    results["enzyme-mlir"] = mlir_result
    return summarize_kernel(kernel, "small", results, load_machine(None))


def test_a_refusal_is_listed_not_an_error():
    row = _row("pairwise", {"kernel": "pairwise", "variant": "enzyme-mlir",
                            "error": "PassFailedException: k.mlir:4:3: Enzyme-MLIR cannot "
                            "differentiate @pairwise: could not compute the adjoint"})  # fmt: skip
    assert row.grads_ok and not row.errors
    text = "\n".join(real_enzyme_markdown([row]))
    assert "| refused: k.mlir:4:3: Enzyme-MLIR cannot differentiate @pairwise" in text


def test_a_known_bug_of_enzymes_is_named_in_its_row(monkeypatch):
    """A kernel whose failure or disagreement a reduced test explains
    (`enzyme_mlir.KNOWN_BUGS`) says so in its row; another kernel's row does not."""
    monkeypatch.setitem(summary.KNOWN_BUGS, "pairwise", "Enzyme sizes a cache too small")
    failed = {"kernel": "pairwise", "variant": "enzyme-mlir",
              "error": "InterpretationError: k.mlir:9:3: index [1] out of bounds"}
    row = _row("pairwise", failed)
    assert row.baselines["enzyme-mlir"]["known_bug"] == "Enzyme sizes a cache too small"
    text = "\n".join(real_enzyme_markdown([row]))
    assert "| failed: k.mlir:9:3: index [1] out of bounds (Enzyme sizes a cache too small) |" \
        in text
    monkeypatch.delitem(summary.KNOWN_BUGS, "pairwise")
    assert "too small" not in "\n".join(real_enzyme_markdown([_row("pairwise", failed)]))

@needs_enzyme
def test_disagreement_is_reported_beside_our_check():
    """Enzyme-MLIR is another program with bugs of its own: its disagreement is shown in
    its table and noted, while our variants' check (bit identity) decides the kernel."""
    mlir = run_job(Job("pairwise", "enzyme-mlir", "small"))
    grads = dict(mlir["grads"])
    grads["dP"] = grads["dP"] * (1 + 1e-9)
    row = _row("pairwise", {**mlir, "grads": grads})
    assert row.grads_ok
    b = row.baselines["enzyme-mlir"]
    assert not b["agrees"]
    assert "normwise relative error (max |a - b| / max |b| per array" in b["note"]
    assert "> 1e-12 (dP); largest per entry" in b["note"]
    assert "| pairwise |" in "\n".join(real_enzyme_markdown([row]))
    assert "**DIFFERS**" in "\n".join(real_enzyme_markdown([row]))


@needs_enzyme
@pytest.mark.parametrize("kernel", ["gemm", "lstm", "pairwise"])
def test_enzyme_mlir_beside_ours(kernel):
    """Its tape counts the buffers Enzyme allocated and its caches; its gradient agrees."""
    mlir = run_job(Job(kernel, "enzyme-mlir", "small"))
    assert mlir["error"] is None
    row = _row(kernel, mlir)
    b = row.baselines["enzyme-mlir"]
    assert b["refused"] is None and b["agrees"], b
    assert row.variants["enzyme-mlir"]["tape_bytes"] > 0
    text = "\n".join(real_enzyme_markdown([row]))
    assert f"| {kernel} |" in text and "agrees" in text
