"""Values cached inside `scf.if` (issue 34 item 3): an optional record field, yielded out
of the branch (the other branch yields a zero into the slot, never read), keeps gradients
bit-identical at every stage, natively too, and streams under mode=always."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import apply, run

# The then-branch overwrites b[i] with sin(b[i]) * a[i]: the reverse needs the old b[i],
# which only that branch loads, so autodiff caches it inside the branch.
BRANCHY = """
func.func @kernel(%a: memref<8xf64>, %b: memref<8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %z) -> (f64) {
    %x = memref.load %a[%i] : memref<8xf64>
    %pos = arith.cmpf ogt, %x, %z : f64
    %v = scf.if %pos -> (f64) {
      %y = memref.load %b[%i] : memref<8xf64>
      %t = math.sin %y : f64
      %m = arith.mulf %t, %x : f64
      memref.store %m, %b[%i] : memref<8xf64>
      scf.yield %m : f64
    } else {
      %u = arith.mulf %x, %x : f64
      scf.yield %u : f64
    }
    %s2 = arith.addf %s, %v : f64
    scf.yield %s2 : f64
  }
  func.return %r : f64
}
"""
AD = "tapeflow-autodiff{functions=kernel}"


def _args() -> list[object]:
    rng = np.random.default_rng(7)
    a, b = rng.uniform(-1, 1, size=8), rng.uniform(-1, 1, size=8)
    return [a, np.zeros_like(a), b, np.zeros_like(b), 1.0]


def test_branch_value_is_a_record_field():
    module = apply(BRANCHY, f"{AD},tapeflow-regions")
    names = {op.name for op in module.walk()}
    assert "region.write" in names and not any(n.startswith("tape.") for n in names)


@pytest.mark.parametrize("depth", (1, 2))
@pytest.mark.parametrize("spm", (16, 48, 1024))
def test_branch_records_bit_identical(depth: int, spm: int):
    args = _args()
    expected = run(apply(BRANCHY, AD), "kernel_grad", args)
    assert run(apply(BRANCHY, f"{AD},tapeflow-lower-tape"), "kernel_grad", args) == expected
    for pipeline in (
        f"{AD},tapeflow-regions,tapeflow-lower-regions",
        f"tapeflow{{functions=kernel depth={depth} spm-bytes={spm * depth} mode=always}}",
    ):
        module = apply(BRANCHY, pipeline)
        assert run(module, "kernel_grad", args) == expected, pipeline
        if "mode=always" in pipeline:
            assert "stream.commit" in {op.name for op in module.walk()}, pipeline


def test_branch_records_native_and_fast_path():
    from helpers.runs import assert_native_bits
    from helpers.sim import assert_identical
    from tapeflow import native

    module = apply(BRANCHY, "tapeflow{functions=kernel spm-bytes=64 mode=always cleanup=true}")
    assert_identical(module, "kernel_grad", _args())
    if not native.tools_available():
        pytest.skip("upstream MLIR 22 is not installed (apt-get install mlir-22-tools)")
    assert_native_bits(module, "kernel_grad", _args(), "mode=always")


# A branch that pushes and a push of the branch's result after it, in one record: the
# regions pass replaces the `scf.if` (its values become new results), and the record's
# other field, the old `scf.if`'s result, must then be read from the new one (it was
# not: the write used a result of the erased op, invalid IR on salam's pathfinder).
CHAINED = """
func.func @kernel(%a: memref<8xf64>, %b: memref<8xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %z) -> (f64) {
    %x = memref.load %a[%i] : memref<8xf64>
    %pos = arith.cmpf ogt, %x, %z : f64
    %v = scf.if %pos -> (f64) {
      %y = memref.load %b[%i] : memref<8xf64>
      %le = arith.cmpf ole, %x, %y : f64
      %m = arith.select %le, %x, %y : f64
      scf.yield %m : f64
    } else {
      scf.yield %x : f64
    }
    %w = math.sin %v : f64
    %p = arith.mulf %w, %v : f64
    memref.store %p, %a[%i] : memref<8xf64>
    %s2 = arith.addf %s, %p : f64
    scf.yield %s2 : f64
  }
  func.return %r : f64
}
"""


def test_branch_result_and_branch_value_in_one_record():
    args = _args()
    expected = run(apply(CHAINED, AD), "kernel_grad", args)
    module = apply(CHAINED, f"{AD},tapeflow-regions")
    assert not any(op.name.startswith("tape.") for op in module.walk())
    for pipeline in (f"{AD},tapeflow-regions,tapeflow-lower-regions",
                     "tapeflow{functions=kernel spm-bytes=64 mode=always}"):  # fmt: skip
        assert run(apply(CHAINED, pipeline), "kernel_grad", args) == expected, pipeline


def test_pathfinder_streams_its_branch_caches():
    """salam's pathfinder (its `min` chains two branches, each caching a compare bit, and
    caches the result) under mode=always: valid IR, every cache in records, gradients
    bit-identical to the Enzyme layout's."""
    pytest.importorskip("clang.cindex", reason="the C frontend needs libclang (extra 'c')")
    from tapeflow.eval.suites import KERNELS as SALAM
    from tapeflow.frontends.c import compile_c

    k = SALAM["pathfinder"]
    text = str(compile_c(k.path.read_text(), str(k.path), k.defines("small")))
    arrays = k.inputs("small", seed=3)
    args: list[object] = [x for a in arrays for x in (a, np.zeros_like(a))] + [1.0]
    expected = run(apply(text, "tapeflow-autodiff"), "run_grad", args)
    module = apply(text, "tapeflow{mode=always spm-bytes=256}")
    names = {op.name for op in module.walk()}
    assert "stream.commit" in names and not any(n.startswith("tape.") for n in names)
    assert run(module, "run_grad", args) == expected
