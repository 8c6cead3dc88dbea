"""Real Enzyme (Enzyme-MLIR) on the salam kernels (benchmarks/salam_enzyme_mlir.py,
`validate_salam.py --enzyme-mlir`): its free-tape twin (`tapeflow-enzyme-ideal-tape`) has
the same gradient bit for bit, counts every tape access and charges none, on the
op-by-op listener and the fast path alike.

Tests that run Enzyme-MLIR skip, naming the extra, when it is not installed."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from benchmarks import salam_enzyme_mlir as sem
from benchmarks import validate_salam as v
from helpers.sim import assert_identical, same_bits
from tapeflow.baselines import enzyme_mlir
from tapeflow.eval.suites import KERNELS
from tapeflow.hwmodel.config import load_machine
from tapeflow.transforms.lower_tape import IDEAL_TAPE_ATTR

needs_enzyme = pytest.mark.skipif(
    not enzyme_mlir.available(),
    reason="needs the optional extra `enzyme` (pip install --no-deps enzyme-ad==0.0.16)",
)


def _small(name: str):
    k = KERNELS[name]
    sizes = k.sizes["small"]
    return k, [f"-D{m}={n}" for m, n in sizes.items()], v._inputs(k, sizes)


@pytest.mark.enzyme
@needs_enzyme
@pytest.mark.parametrize("name", ["logsum", "gravity"])
def test_ideal_tape_same_bits_counted_free(name: str):
    """logsum (Enzyme's buffers, a cache of them) and gravity (also enzyme.store/load):
    the tagged program's gradient is Enzyme-MLIR's bit for bit; each tape access it
    stops charging is counted as a free one; fewer cycles; the fast path equals the
    listener on every field of the report, results and arguments."""
    k, flags, arrays = _small(name)
    machine = load_machine("accel-salam")
    orig, ideal = (sem.compile_module(k.path, flags, ideal=x) for x in (False, True))
    assert not any(IDEAL_TAPE_ATTR in op.attributes for op in orig.walk())
    assert any(op.name == "enzyme.push" and IDEAL_TAPE_ATTR in op.attributes
               for op in ideal.walk())  # fmt: skip
    runs = {}
    for label, module in (("orig", orig), ("ideal", ideal)):
        _, runs[label] = assert_identical(module, k.grad_entry,
                                          v._args(k, copy.deepcopy(arrays)), machine)  # fmt: skip
    o, i = (runs[x].report["ops"] for x in ("orig", "ideal"))
    free = i["ideal_tape"]
    assert "ideal_tape" not in o and free["loads"] > 0 and free["stores"] > 0
    assert o["loads"] == i["loads"] + free["loads"]
    assert o["stores"] == i["stores"] + free["stores"]
    assert runs["ideal"].report["cycles"] < runs["orig"].report["cycles"]
    for a, b in zip(runs["orig"].run.arguments, runs["ideal"].run.arguments, strict=True):
        if isinstance(a, np.ndarray):
            assert same_bits(a, b)


def test_gap_verdicts():
    """The access-gap verdict from the access factors (1.0: none of the speedup error)."""
    assert sem._gap([0.75], [1.04]) == "closed"
    assert sem._gap([0.75], [1.24]) == "narrowed"
    assert sem._gap([0.67], [0.67]) == "unchanged"
    assert sem._gap([1.00, 0.99], [0.72, 0.72]) == "widened"


def test_gradient_difference_splits_read_and_written():
    """A shadow's written elements (their final value a convention) are compared apart."""
    written = np.array([False, True])
    ours = {"x": (np.array([1.0, 0.0]), written)}
    theirs = {"x": (np.array([1.0, 2.0]), written)}
    assert sem.gradient_difference(ours, theirs, written=False) == (0.0, "")
    assert sem.gradient_difference(ours, theirs, written=True) == (1.0, "x")


@pytest.mark.enzyme
@needs_enzyme
def test_validation_runs_enzyme_mlir():
    """`validate_salam --enzyme-mlir` on logsum: both programs at every size, Enzyme's
    gradient equal to ours on the input, the free tape's bits equal, its section written."""
    failed: list = []
    (e,) = v.run(["logsum"], [], failed, enzyme_mlir=True)
    x = e["mlir"]
    assert not failed and "error" not in x and x["bits"]
    assert len(x["orig"]) == len(x["ad"]) == len(e["sizes"])
    assert x["gradient"][0][0] < 1e-12
    assert all(a["free_reads"] > 0 and a["cycles"] < o["cycles"]
               for o, a in zip(x["orig"], x["ad"], strict=True))  # fmt: skip
    assert all(o["free_reads"] == 0 for o in x["orig"])
    text = "\n".join(sem.markdown([e]))
    assert "### logsum: Enzyme-MLIR against theirs" in text and "- logsum: " in text
