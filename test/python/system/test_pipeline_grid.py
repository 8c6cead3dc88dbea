"""The whole `tapeflow` pipeline over a grid of loop shapes keeps the gradients bit for bit.

Issue #11 bug 1: `tapeflow-stream` once used a hoisted index constant (`-1`, from a loop
starting at 1) after erasing it with a dead record index, which only showed with some lower
bounds, steps, trip counts and depths. So every program shape here runs over lower bounds
(0, 1, 3), steps (1, 2, 3), trip counts (0, 1, 2, 5), depths 1-4 and three scratchpad
sizes (1, 3 and 8 records per tile; with 8, the nest's layers span its inner loop, issue
#10 item 6), and its gradients must be identical to those of the
autodiff IR. The shapes: the issue's two sequential loops (the second with the step under
test), and a nest whose outer loop has the bounds under test and saves values at both
levels (so layers may span the outer loop).
"""

from __future__ import annotations


import numpy as np
import pytest


from helpers.pipelines import apply, region_record_bytes, run

LOWER_BOUNDS = (0, 1, 3)
STEPS = (1, 2, 3)
TRIPS = (0, 1, 2, 5)
DEPTHS = (1, 2, 3, 4)


def _sequential(lb: int, step: int, n: int) -> str:
    """The program of issue #11 bug 1, with its bounds as parameters."""
    return f"""
func.func @kernel(%a: memref<16xf64>) -> f64 {{
  %c1 = arith.constant 1 : index
  %lb = arith.constant {lb} : index
  %ub1 = arith.constant {lb + n} : index
  %ub2 = arith.constant {lb + n * step} : index
  %s2 = arith.constant {step} : index
  %z = arith.constant 0.0 : f64
  %r1 = scf.for %i = %lb to %ub1 step %c1 iter_args(%s = %z) -> (f64) {{
    %x = memref.load %a[%i] : memref<16xf64>
    %y = arith.mulf %x, %x : f64
    %t = arith.addf %s, %y : f64
    scf.yield %t : f64
  }}
  %r2 = scf.for %i = %lb to %ub2 step %s2 iter_args(%s = %r1) -> (f64) {{
    %x = memref.load %a[%i] : memref<16xf64>
    %y = math.sin %x : f64
    memref.store %y, %a[%i] : memref<16xf64>
    %t = arith.mulf %y, %y : f64
    %u = arith.addf %s, %t : f64
    scf.yield %u : f64
  }}
  func.return %r2 : f64
}}
"""


def _nested(lb: int, step: int, n: int, dynamic: bool = False) -> str:
    """An outer loop with the bounds under test around a 3-iteration inner loop with the
    same lower bound and step; values are saved per outer iteration (`exp`'s operand) and
    per inner iteration (`sin`'s). `dynamic`: the outer upper bound is an argument."""
    ub, n_arg = ("%n", ", %n: index") if dynamic else ("%ub", "")
    return f"""
func.func @kernel(%a: memref<16xf64>, %b: memref<16xf64>{n_arg}) -> f64 {{
  %lb = arith.constant {lb} : index
  %ub = arith.constant {lb + n * step} : index
  %jub = arith.constant {lb + 3 * step} : index
  %st = arith.constant {step} : index
  %z = arith.constant 0.0 : f64
  %r = scf.for %i = %lb to {ub} step %st iter_args(%s = %z) -> (f64) {{
    %x = memref.load %a[%i] : memref<16xf64>
    %q = scf.for %j = %lb to %jub step %st iter_args(%t = %x) -> (f64) {{
      %w = memref.load %b[%j] : memref<16xf64>
      %p = arith.mulf %t, %w : f64
      %y = math.sin %p : f64
      scf.yield %y : f64
    }}
    %e = math.exp %x : f64
    %v = arith.mulf %q, %e : f64
    memref.store %v, %a[%i] : memref<16xf64>
    %u = arith.addf %s, %v : f64
    scf.yield %u : f64
  }}
  func.return %r : f64
}}
"""


def _args(text: str, *ints: int) -> list[object]:
    rng = np.random.default_rng(3)
    args: list[object] = []
    for _ in range(text.count("memref<16xf64>", 0, text.index(") -> f64"))):
        a = rng.uniform(-1, 1, size=16)
        args += [a, np.zeros_like(a)]
    return [*args, *ints, 1.0]


@pytest.mark.slow
@pytest.mark.parametrize("shape", [_sequential, _nested])
@pytest.mark.parametrize("n", TRIPS)
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("lb", LOWER_BOUNDS)
def test_pipeline_grid_bit_identical(shape, lb: int, step: int, n: int):
    text = shape(lb, step, n)
    args = _args(text)
    expected = run(apply(text, "tapeflow-autodiff{functions=kernel}"), "kernel_grad", args)
    record = region_record_bytes(apply(text, "tapeflow-autodiff{functions=kernel},tapeflow-regions"))
    assert record > 0
    for depth in DEPTHS:
        for records in (1, 3, 8):
            spm = depth * record * records
            pipeline = f"tapeflow{{functions=kernel depth={depth} spm-bytes={spm} mode=always}}"
            module = apply(text, pipeline)
            assert run(module, "kernel_grad", args) == expected, pipeline
            if shape is _nested and records == 8 and n >= 2:
                # 8 records hold two runs of the 3-iteration inner loop: layers span it.
                layers = (
                    "tapeflow-autodiff{functions=kernel},tapeflow-regions,"
                    f"tapeflow-layers{{depth={depth} spm-bytes={spm}}}"
                )
                assert "tapeflow.layer_span = 1" in str(apply(text, layers)), layers
            names = {op.name for op in module.walk()}
            assert "stream.commit" in names and not any(
                name.startswith("tape.") for name in names
            ), pipeline


@pytest.mark.parametrize("n", TRIPS)
@pytest.mark.parametrize("step", STEPS)
def test_spanning_layers_dynamic_outer_loop(step: int, n: int):
    """Layers spanning the constant inner loop of an outer loop whose trip count is known
    only at run time (the layer count is computed at run time)."""
    text = _nested(1, step, n, dynamic=True)
    ub = 1 + n * step
    args = _args(text, ub)
    expected = run(apply(text, "tapeflow-autodiff{functions=kernel}"), "kernel_grad", args)
    record = region_record_bytes(apply(text, "tapeflow-autodiff{functions=kernel},tapeflow-regions"))
    for depth in (1, 2):
        spm = depth * record * 8
        layers = (
            "tapeflow-autodiff{functions=kernel},tapeflow-regions,"
            f"tapeflow-layers{{depth={depth} spm-bytes={spm}}}"
        )
        assert "tapeflow.layer_span = 1" in str(apply(text, layers)), layers
        module = apply(text, f"{layers},tapeflow-stream{{depth={depth}}}")
        assert run(module, "kernel_grad", args) == expected, layers
