"""Each TapeFlow transform keeps the program's meaning exactly.

For every benchmark kernel at its small size (and for hand-written autodiff-shaped
functions that exercise what the kernels may not: several field types, nested regions,
dynamic trip counts, caches the regions pass must leave alone), the gradients computed by
the interpreter after `tapeflow-regions`, `tapeflow-lower-regions`, `tapeflow-layers`,
`tapeflow-stream` and the whole `tapeflow` pipeline are identical, bit for bit, to those
of the autodiff IR. The option grid covers a scratchpad so small that every layer holds one
record, layers that do not divide the trip counts, and prefetch depths 1, 2 and 4.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import Float64Type, MemRefType, ModuleOp
from xdsl.utils.exceptions import PassFailedException

from helpers.pipelines import KERNELS, apply, grad_args, op_counts, region_record_bytes, run
from helpers.paths import INPUTS


@cache
def _autodiff_text(name: str, policy: str) -> str:
    return str(apply(KERNELS[name].source("small"), f"tapeflow-autodiff{{policy={policy}}}"))


def _grid(record_bytes: int) -> list[str]:
    """Pipelines after the autodiff IR: one record per layer, 3-record layers, depths 1/2/4,
    and 16- and 64-record tiles and the default scratchpad, where layers span inner loops."""
    s = max(record_bytes, 1)
    return [
        "tapeflow-regions",
        "tapeflow-regions,tapeflow-lower-regions",
        f"tapeflow-regions,tapeflow-layers{{spm-bytes={2 * s}}}",
        f"tapeflow-regions,tapeflow-layers{{spm-bytes={3 * s} depth=1}},tapeflow-stream{{depth=1}}",
        f"tapeflow-regions,tapeflow-layers{{spm-bytes={6 * s} depth=2}},tapeflow-stream{{depth=2}}",
        f"tapeflow-regions,tapeflow-layers{{spm-bytes={4 * s} depth=4}},tapeflow-stream{{depth=4}}",
        f"tapeflow-regions,tapeflow-layers{{spm-bytes={32 * s}}},tapeflow-stream",
        f"tapeflow-regions,tapeflow-layers{{spm-bytes={192 * s} depth=3}},"
        "tapeflow-stream{depth=3}",
        "tapeflow-regions,tapeflow-layers,tapeflow-stream",
    ]


def _check(text: str, entry: str, args: list[Any], extra: list[str] = ()) -> int:
    """Checks every pipeline of the grid on `text`; returns how many region tapes it has."""
    expected = run(apply(text, ""), entry, args)
    regions = apply(text, "tapeflow-regions")
    record_bytes = region_record_bytes(regions)
    for pipeline in [*_grid(record_bytes), *extra]:
        module = apply(text, pipeline)
        assert run(module, entry, args) == expected, pipeline
        counts = op_counts(module)
        if "tapeflow-stream" in pipeline and record_bytes:
            assert counts.get("stream.commit", 0) > 0, pipeline
            assert counts.get("stream.prefetch", 0) > 0, pipeline
        if "lower-regions" in pipeline:
            assert not any(n.startswith("tape.") for n in counts), pipeline
    return counts_of(regions, "region.alloc")


def counts_of(module: ModuleOp, name: str) -> int:
    return op_counts(module).get(name, 0)


POLICIES = ("min-tape", "cache-all")


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_gradients_identical(name: str, policy: str):
    text = _autodiff_text(name, policy)
    _check(text, KERNELS[name].grad_entry, grad_args(name))


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    ["spm-bytes=64 depth=1 mode=always", "spm-bytes=200 depth=2 tile-bytes=40 mode=always",
     "spm-bytes=4096 depth=4 mode=always", "machine=accel-salam"],  # fmt: skip
)
@pytest.mark.parametrize("name", ["gemm", "lstm", "softmax_ce"])
def test_pipeline_gradients_identical(name: str, options: str):
    """`tapeflow{...}` on the primal computes the autodiff IR's gradients."""
    kernel = KERNELS[name]
    args = grad_args(name)
    expected = run(apply(_autodiff_text(name, "min-tape"), ""), kernel.grad_entry, args)
    pipeline = f"tapeflow{{{options}}}"
    failure = None
    try:
        module = apply(kernel.source("small"), pipeline)
    except PassFailedException as e:
        failure = str(e)
    if failure is not None:  # a scratchpad too small for this kernel: a clean failure
        assert "too small" in failure
        return
    assert run(module, kernel.grad_entry, args) == expected




def _hand_args(module_text: str, entry: str, ints: tuple[int, ...]) -> list[Any]:
    module = apply(module_text, "")
    fn = next(o for o in module.walk() if isinstance(o, func.FuncOp) and o.sym_name.data == entry)
    rng = np.random.default_rng(7)
    args: list[Any] = []
    queue = list(ints)
    for t in fn.function_type.inputs.data:
        if isinstance(t, MemRefType):
            args.append(rng.uniform(-1, 1, size=tuple(t.get_shape())))
        elif isinstance(t, Float64Type):
            args.append(float(rng.uniform(-1, 1)))
        else:
            args.append(queue.pop(0))
    return args


@pytest.mark.slow
@pytest.mark.parametrize(
    ("file", "entry", "ints"),
    [
        ("mixed_types.mlir", "f_grad", ()),
        ("nested_dynamic.mlir", "nest_grad", (7, 5)),
        ("nested_dynamic.mlir", "nest_grad", (6, 3)),
        ("nested_dynamic.mlir", "nest_grad", (1, 5)),
        ("nested_dynamic.mlir", "nest_grad", (0, 0)),
    ],
)
def test_hand_written_gradients_identical(file: str, entry: str, ints: tuple[int, ...]):
    """f64/f32/i1/index fields, a straight-line region, nested regions with dynamic trip
    counts (inner, and outer loop with step 2), two regions in one loop body, a cache
    under scf.while that stays a tape cache and one under scf.if that becomes an optional
    record field."""
    text = (INPUTS / file).read_text()
    extra = [
        f"tapeflow-regions,tapeflow-stream{{tile-bytes={bytes_} depth=3}}" for bytes_ in (24, 40)
    ]
    assert _check(text, entry, _hand_args(text, entry, ints), extra) >= 2
    regions = apply(text, "tapeflow-regions")
    if file == "nested_dynamic.mlir":
        # the scf.while cache is left alone; the scf.if one is an optional record field
        assert counts_of(regions, "tape.init") == 1
        assert counts_of(regions, "region.alloc") == 5
