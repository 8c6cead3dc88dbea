"""While regions (issue 34 item 2): values cached in an `scf.while` whose trip count
depends on the data get one record per iteration in a growable DRAM record tape
(`tapeflow.transforms.while_regions`). Gradients keep their bits at every stage
(interpreter, compiled fast path, natively) and match finite differences; the tape grows
past its first size.

The kernels: per element, halve-and-bend `w` until it is at most 1 (a count from 0 to a
dozen iterations, set by the data), inside an outer loop; the same while loop alone in
the function (no outer loop, no offsets table); and a while loop after a rectangular
inner loop of the same outer body (two regions of one nest).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from helpers.pipelines import apply, run, stages

N = 7

_WHILE = """
    %y, %c = scf.while (%w = %v, %s = %acc) : (f64, f64) -> (f64, f64) {
      %big = arith.cmpf ogt, %w, %one : f64
      scf.condition(%big) %w, %s : f64, f64
    } do {
    ^bb0(%w2: f64, %s2: f64):
      %sn = math.sin %w2 : f64
      %h = arith.mulf %sn, %half : f64
      %n = arith.addf %w2, %h : f64
      %m = arith.mulf %n, %half : f64
      %t = math.tanh %m : f64
      %s3 = arith.addf %s2, %t : f64
      scf.yield %m, %s3 : f64, f64
    }"""

def _in_loop(before: str) -> str:
    """The while loop in an outer loop of N iterations, after `before` (which defines
    %v, the while's start, and %acc from %xi and %pi)."""
    return f"""
func.func @kernel(%x: memref<7xf64>, %p: memref<7xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %cn = arith.constant {N} : index
  %z = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %r = scf.for %i = %c0 to %cn step %c1 iter_args(%a = %z) -> (f64) {{
    %xi = memref.load %x[%i] : memref<7xf64>
    %pi = memref.load %p[%i] : memref<7xf64>
    {before}
    {_WHILE}
    %yc = arith.mulf %y, %c : f64
    %a2 = arith.addf %a, %yc : f64
    scf.yield %a2 : f64
  }}
  func.return %r : f64
}}
"""


NESTED = _in_loop("""%v = arith.mulf %xi, %xi : f64
    %acc = arith.mulf %pi, %xi : f64""")

ALONE = f"""
func.func @kernel(%x: memref<7xf64>, %p: memref<7xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %x3 = memref.load %x[%c3] : memref<7xf64>
  %p0 = memref.load %p[%c0] : memref<7xf64>
  %e = math.exp %x3 : f64
  %v = arith.mulf %e, %p0 : f64
  %acc = arith.mulf %p0, %x3 : f64
  {_WHILE}
  %yc = arith.mulf %y, %c : f64
  func.return %yc : f64
}}
"""

# A rectangular loop, then the while loop, in one outer body: a region in the inner loop,
# the while region, and the outer body's values.
SEGMENTS = _in_loop("""%g = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %xi) -> (f64) {
      %q = math.sin %b : f64
      %b2 = arith.addf %q, %pi : f64
      scf.yield %b2 : f64
    }
    %v = arith.mulf %g, %g : f64
    %acc = arith.mulf %pi, %g : f64""")

SHAPES = {"nested": NESTED, "alone": ALONE, "segments": SEGMENTS}
AD = "tapeflow-autodiff{functions=kernel}"


def _args(seed: int = 3) -> list[object]:
    """x in +-3 (w = x^2 from 0 to 9: 0 to ~5 halvings), p in +-1."""
    rng = np.random.default_rng(seed)
    x, p = rng.uniform(-3, 3, size=N), rng.uniform(-1, 1, size=N)
    return [x, np.zeros_like(x), p, np.zeros_like(p), 1.0]


def _trips(x: np.ndarray) -> list[int]:
    """The while's iterations per element of NESTED (the loop in NumPy)."""
    out = []
    for w in x * x:
        n = 0
        while w > 1.0:
            w = (w + np.sin(w) * 0.5) * 0.5
            n += 1
        out.append(n)
    return out


@pytest.mark.parametrize("shape", SHAPES)
def test_while_region_formed(shape: str):
    """Every cache becomes a record field (none is left a tape.cache); the while's tape
    grows (`region.reserve` before its write); streamed, its FIFO grows
    (`stream.fifo_reserve`) and the growable DRAM tape is gone."""
    module = apply(SHAPES[shape], f"{AD},tapeflow-regions")
    names = [op.name for op in module.walk()]
    assert not any(n.startswith("tape.") for n in names)
    (alloc,) = [op for op in module.walk()
                if op.name == "region.alloc" and "tapeflow.growable" in op.attributes]  # fmt: skip
    assert alloc.growable and names.count("region.reserve") == 1
    module = apply(SHAPES[shape], "tapeflow{functions=kernel spm-bytes=96 mode=always}")
    names = [op.name for op in module.walk()]
    assert names.count("stream.fifo_reserve") == 1 and "region.reserve" not in names
    assert "tapeflow.growable" not in str(module)


def test_trip_counts_depend_on_the_data():
    """The test inputs give the while loop different counts (0 included) per element, and
    the tape grows past its first size (one record per outer iteration)."""
    from tapeflow.interpreters import region as interp_region

    x = _args()[0]
    trips = _trips(x)
    assert len(set(trips)) >= 3 and 0 in trips and sum(trips) > N, trips
    seen: list[int] = []
    original = interp_region.RecordBuffer.reserve

    def spy(self, op, count):  # type: ignore[no-untyped-def]
        grew = original(self, op, count)
        if grew:
            seen.append(self.count)
        return grew

    interp_region.RecordBuffer.reserve = spy  # type: ignore[method-assign]
    try:
        run(apply(NESTED, f"{AD},tapeflow-regions"), "kernel_grad", _args())
    finally:
        interp_region.RecordBuffer.reserve = original  # type: ignore[method-assign]
    assert seen and seen[0] == 2 * N and seen[-1] >= sum(trips), (seen, trips)


@pytest.mark.parametrize("shape", SHAPES)
def test_while_bit_identical_every_stage(shape: str):
    text = SHAPES[shape]
    args = _args()
    expected = run(apply(text, AD), "kernel_grad", args)
    assert run(apply(text, f"{AD},tapeflow-lower-tape"), "kernel_grad", args) == expected
    for depth, spm in ((1, 48), (2, 96), (3, 144)):
        for pipeline in stages("kernel", depth, spm):
            module = apply(text, pipeline)
            assert run(module, "kernel_grad", args) == expected, pipeline
            assert not any(op.name.startswith("tape.") for op in module.walk()), pipeline


@pytest.mark.parametrize("shape", SHAPES)
def test_while_fast_path_identical(shape: str):
    """The compiled fast path agrees with the op-by-op model (the tape's growth included)."""
    from helpers.sim import assert_identical

    module = apply(SHAPES[shape], "tapeflow{functions=kernel depth=2 spm-bytes=96 mode=always}")
    assert_identical(module, "kernel_grad", _args())


def test_tape_bytes_count_the_grown_tape():
    """The hardware model's tape bytes hold the grown tape (and the one it grew from, while
    it is copied), not its first size."""
    from tapeflow.simulate import simulate

    module = apply(NESTED, f"{AD},tapeflow-regions,tapeflow-lower-regions")
    report = simulate(module, "kernel_grad", _args())
    records = sum(_trips(_args()[0]))
    assert report.report["tape_bytes"] >= records * 8 + N * 8, (report.report, records)


def _loss(text: str, x: np.ndarray, p: np.ndarray) -> float:
    from benchmarks.kernels.harness import to_memref
    from tapeflow.interpreters import make_interpreter

    (value,) = make_interpreter(apply(text, "")).call_op("kernel", (to_memref(x), to_memref(p)))
    return float(value)


@pytest.mark.parametrize("shape", SHAPES)
def test_while_gradient_matches_finite_differences(shape: str):
    """Central differences with a step that changes no trip count (checked)."""
    text = SHAPES[shape]
    args = _args(seed=5)
    x, p = args[0], args[2]
    out = run(apply(text, "tapeflow{functions=kernel depth=2 spm-bytes=96 mode=always}"),
              "kernel_grad", args)  # fmt: skip
    grads = [np.array([struct.unpack("<d", b)[0] for b in out[i]]) for i in (1, 3)]
    assert np.any(grads[0] != 0) and np.any(grads[1] != 0)
    eps = 1e-6
    for which, a in enumerate((x, p)):
        for i in range(a.size):
            plus, minus = a.copy(), a.copy()
            plus[i] += eps
            minus[i] -= eps
            if which == 0:
                assert _trips(plus) == _trips(minus) == _trips(x)
            pair = [(plus, p), (minus, p)] if which == 0 else [(x, plus), (x, minus)]
            fd = (_loss(text, *pair[0]) - _loss(text, *pair[1])) / (2 * eps)
            assert grads[which][i] == pytest.approx(fd, rel=1e-5, abs=1e-7), (which, i)


@pytest.mark.parametrize("shape", SHAPES)
def test_while_native_identical(shape: str):
    """Lowered to upstream MLIR (the growable tape's slots and copy loop) and run
    natively, each stage gives the interpreter's bits."""
    from helpers.runs import assert_native_bits
    from tapeflow import native

    if not native.tools_available():
        pytest.skip("upstream MLIR 22 is not installed (apt-get install mlir-22-tools)")
    for pipeline in stages("kernel", 2, 96)[1:]:
        assert_native_bits(apply(SHAPES[shape], pipeline), "kernel_grad", _args(), pipeline)


def test_while_in_a_loop_that_never_runs():
    """An outer loop of 0 iterations around the while (the fuzzer's seeds 33 and 100): the
    tape's first capacity is 1 record, not the nest's 0 (region.alloc's count is >= 1), and
    the gradient keeps its bits at every stage."""
    text = NESTED.replace(f"%cn = arith.constant {N} : index", "%cn = arith.constant 0 : index")
    args = _args()
    expected = run(apply(text, AD), "kernel_grad", args)
    (alloc,) = [op for op in apply(text, f"{AD},tapeflow-regions").walk()
                if op.name == "region.alloc" and "tapeflow.growable" in op.attributes]  # fmt: skip
    assert alloc.static_count == 1
    for pipeline in stages("kernel", 1, 48):
        assert run(apply(text, pipeline), "kernel_grad", args) == expected, pipeline
