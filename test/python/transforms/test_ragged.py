"""Ragged regions (issue 34 item 1): nests whose inner trip count varies with the outer
iteration keep bit-identical gradients at every stage (regions, layers, stream; interpreter
and compiled fast path) over depths and tile sizes that put tile boundaries inside outer
iterations, and their gradients match finite differences.

The kernels: a lower-triangular mat-vec with tanh (`j <= i`), the same with a stepped,
offset inner loop and a trip count known only at run time, and an LU-like nest whose
two inner loops both start at `k + 1` (a two-loop ragged box).
"""

from __future__ import annotations

import struct
from functools import cache

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp


from helpers.pipelines import apply, region_record_bytes, run, stages

N = 7


def _trimv(dynamic: bool = False, lb: str = "%c0", step: int = 1) -> str:
    """loss = sum_i tanh(a_i)^2, a_i folding `a * t + t` over t = tanh(L[i, j] x[j]) for
    j in lb..i by step (the reverse sweep needs each `a`: the ragged tape)."""
    n_arg, ub = (", %n: index", "%n") if dynamic else ("", "%cn")
    return f"""
func.func @kernel(%l: memref<49xf64>, %x: memref<7xf64>{n_arg}) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {N} : index
  %st = arith.constant {step} : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to {ub} step %c1 iter_args(%s = %z) -> (f64) {{
    %ip1 = arith.addi %i, %c1 : index
    %row = arith.muli %i, %cn : index
    %lo = arith.addi {lb}, %c0 : index
    %acc = scf.for %j = %lo to %ip1 step %st iter_args(%a = %z) -> (f64) {{
      %k = arith.addi %row, %j : index
      %lij = memref.load %l[%k] : memref<49xf64>
      %xj = memref.load %x[%j] : memref<7xf64>
      %p = arith.mulf %lij, %xj : f64
      %t = math.tanh %p : f64
      %m = arith.mulf %a, %t : f64
      %a2 = arith.addf %m, %t : f64
      scf.yield %a2 : f64
    }}
    %y = math.tanh %acc : f64
    %yy = arith.mulf %y, %y : f64
    %s2 = arith.addf %s, %yy : f64
    scf.yield %s2 : f64
  }}
  func.return %r : f64
}}
"""


LU_LIKE = f"""
func.func @kernel(%l: memref<49xf64>, %x: memref<7xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {N} : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %k = %c0 to %cn step %c1 iter_args(%s = %z) -> (f64) {{
    %k1 = arith.addi %k, %c1 : index
    %xk = memref.load %x[%k] : memref<7xf64>
    %u = scf.for %i = %k1 to %cn step %c1 iter_args(%a = %s) -> (f64) {{
      %row = arith.muli %i, %cn : index
      %v = scf.for %j = %k1 to %cn step %c1 iter_args(%b = %a) -> (f64) {{
        %q = arith.addi %row, %j : index
        %lij = memref.load %l[%q] : memref<49xf64>
        %p = arith.mulf %lij, %xk : f64
        %t = math.sin %p : f64
        %b2 = arith.mulf %b, %t : f64
        %b3 = arith.addf %b2, %t : f64
        scf.yield %b3 : f64
      }}
      scf.yield %v : f64
    }}
    scf.yield %u : f64
  }}
  func.return %r : f64
}}
"""

# Values cached before and after a loop nested in a triangular loop's body: two ragged
# regions of one nest (one per segment of the body), and a third inside the nested loop.
SEGMENTS = f"""
func.func @kernel(%l: memref<49xf64>, %x: memref<7xf64>) -> f64 {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cn = arith.constant {N} : index
  %h = arith.constant 0.5 : f64
  %r = scf.for %i = %c0 to %cn step %c1 iter_args(%s = %h) -> (f64) {{
    %ip1 = arith.addi %i, %c1 : index
    %row = arith.muli %i, %cn : index
    %acc = scf.for %j = %c0 to %ip1 step %c1 iter_args(%a = %s) -> (f64) {{
      %k = arith.addi %row, %j : index
      %lij = memref.load %l[%k] : memref<49xf64>
      %t = math.tanh %lij : f64
      %m = arith.mulf %a, %t : f64
      %in = scf.for %q = %c0 to %c2 step %c1 iter_args(%b = %m) -> (f64) {{
        %u = math.sin %b : f64
        scf.yield %u : f64
      }}
      %xj = memref.load %x[%j] : memref<7xf64>
      %p = arith.mulf %in, %xj : f64
      %e = math.tanh %p : f64
      %a2 = arith.addf %a, %e : f64
      scf.yield %a2 : f64
    }}
    scf.yield %acc : f64
  }}
  func.return %r : f64
}}
"""

SHAPES = {
    "triangular": (_trimv(), ()),
    "stepped": (_trimv(lb="%c1", step=2), ()),
    "dynamic": (_trimv(dynamic=True), (N,)),
    "lu-like": (LU_LIKE, ()),
    "segments": (SEGMENTS, ()),
}
AD = "tapeflow-autodiff{functions=kernel}"


def _args(ints: tuple[int, ...], seed: int = 3) -> list[object]:
    rng = np.random.default_rng(seed)
    l, x = rng.uniform(-1, 1, size=49), rng.uniform(-1, 1, size=7)
    return [l, np.zeros_like(l), x, np.zeros_like(x), *ints, 1.0]


@pytest.mark.parametrize("shape", SHAPES)
def test_ragged_region_formed(shape: str):
    text, _ = SHAPES[shape]
    module = apply(text, f"{AD},tapeflow-regions")
    names = [op.name for op in module.walk()]
    assert "region.alloc" in names and not any(n.startswith("tape.") for n in names)
    assert "tapeflow.ragged" in str(module)


@cache
def _references(shape: str) -> tuple[list[object], list[object], int]:
    """The autodiff IR's bits and the Enzyme layout's on `_args`, and the regions' record
    bytes: the same for every depth and record count (computed once per shape)."""
    text, ints = SHAPES[shape]
    args = _args(ints)
    expected = run(apply(text, AD), "kernel_grad", args)
    enzyme = run(apply(text, f"{AD},tapeflow-lower-tape"), "kernel_grad", args)
    return expected, enzyme, region_record_bytes(apply(text, f"{AD},tapeflow-regions"))


@pytest.mark.parametrize("depth", (1, 2, 3))
@pytest.mark.parametrize("records", (1, 3, 5, 16))
@pytest.mark.parametrize("shape", SHAPES)
def test_ragged_bit_identical_every_stage(shape: str, records: int, depth: int):
    text, ints = SHAPES[shape]
    args = _args(ints)
    expected, enzyme, record_bytes = _references(shape)
    assert enzyme == expected
    spm = depth * records * record_bytes
    for pipeline in stages("kernel", depth, spm):
        module = apply(text, pipeline)
        assert run(module, "kernel_grad", args) == expected, pipeline
        if "stream" in pipeline or "mode=always" in pipeline:
            names = {op.name for op in module.walk()}
            assert "stream.commit" in names, pipeline
            assert not any(n.startswith("tape.") for n in names), pipeline


def test_ragged_regions_of_one_nest_share_their_pieces():
    """Two ragged regions of one nest (values cached before and after a nested loop)
    split their innermost loops once, at the same tile boundaries (the second split the
    erased loop: a traceback the program fuzzer's triangular loops found)."""
    module = apply(SEGMENTS, f"{AD},tapeflow-regions")
    writes = [op for op in module.walk() if op.name == "region.write"]
    loops = {id(w.parent_op()) for w in writes}
    assert len(writes) == 3 and len(loops) == 2  # two regions in the j loop, one in q's
    assert str(module).count("tapeflow.ragged") == 3


def test_ragged_nest_without_iterations():
    """Constant bounds that give no record at all (`j` from 7 to `i + 1 <= 7`): the
    tape's count is the computed one, 0 at run time (it was folded to a static 0, invalid
    IR: the program fuzzer's triangular loops found it); gradients stay identical at
    every stage, streamed too."""
    text = _trimv(lb="%cn")
    module = apply(text, f"{AD},tapeflow-regions")
    (alloc,) = [op for op in module.walk()
                if op.name == "region.alloc" and "tapeflow.ragged" in op.attributes]  # fmt: skip
    assert alloc.static_count is None
    args = _args(())
    expected = run(apply(text, AD), "kernel_grad", args)
    for pipeline in stages("kernel", 2, 64):
        assert run(apply(text, pipeline), "kernel_grad", args) == expected, pipeline


def test_tile_boundary_inside_an_outer_iteration():
    """3-record tiles over rows of 1..7 records: some rows hold two tile boundaries."""
    text, ints = SHAPES["triangular"]
    layers = f"{AD},tapeflow-regions,tapeflow-layers{{depth=1 spm-bytes=48}}"
    module = apply(text, layers)
    assert '"tapeflow.layer_records" = 3' in str(module) or "tapeflow.layer_records = 3" in str(
        module
    )
    args = _args(ints)
    assert run(module, "kernel_grad", args) == run(apply(text, AD), "kernel_grad", args)


@pytest.mark.parametrize("shape", SHAPES)
def test_ragged_fast_path_identical(shape: str):
    """The compiled fast path agrees with the op-by-op model on the streamed program."""
    from helpers.sim import assert_identical

    text, ints = SHAPES[shape]
    module = apply(text, "tapeflow{functions=kernel depth=2 spm-bytes=64 mode=always cleanup=true}")
    assert_identical(module, "kernel_grad", _args(ints))


def _loss(primal: ModuleOp, l: np.ndarray, x: np.ndarray, ints: tuple[int, ...]) -> float:
    from benchmarks.kernels.harness import to_memref
    from tapeflow.interpreters import make_interpreter

    (value,) = make_interpreter(primal).call_op("kernel", (to_memref(l), to_memref(x), *ints))
    return float(value)


@pytest.mark.parametrize("shape", SHAPES)
def test_ragged_gradient_matches_finite_differences(shape: str):
    text, ints = SHAPES[shape]
    args = _args(ints, seed=5)
    l, x = args[0], args[2]
    module = apply(text, "tapeflow{functions=kernel depth=2 spm-bytes=64 mode=always}")
    out = run(module, "kernel_grad", args)
    # no results; the bits of l, dl, x, dx
    grads = [np.array([struct.unpack("<d", b)[0] for b in out[i]]) for i in (1, 3)]
    assert np.any(grads[0] != 0)
    primal = apply(text, "")
    eps = 1e-6
    for which, a in enumerate((l, x)):
        for i in range(a.size):
            plus, minus = a.copy(), a.copy()
            plus[i] += eps
            minus[i] -= eps
            pair = [(plus, x), (minus, x)] if which == 0 else [(l, plus), (l, minus)]
            fd = (_loss(primal, *pair[0], ints) - _loss(primal, *pair[1], ints)) / (2 * eps)
            assert grads[which][i] == pytest.approx(fd, rel=1e-5, abs=1e-7), (which, i)


@pytest.mark.parametrize("shape", SHAPES)
def test_ragged_native_identical(shape: str):
    """Lowered to upstream MLIR and run natively, each stage gives the interpreter's bits."""
    from helpers.runs import assert_native_bits
    from tapeflow import native

    if not native.tools_available():
        pytest.skip("upstream MLIR 22 is not installed (apt-get install mlir-22-tools)")
    text, ints = SHAPES[shape]
    for pipeline in stages("kernel", 2, 64)[1:]:
        assert_native_bits(apply(text, pipeline), "kernel_grad", _args(ints), pipeline)
