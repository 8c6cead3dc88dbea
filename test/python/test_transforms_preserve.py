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

import struct
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tapeflow.dialects import region
from xdsl.dialects import func
from xdsl.dialects.builtin import Float64Type, MemRefType, ModuleOp
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import parse_module
from tapeflow.registry import get_all_passes, make_context

KERNELS: dict[str, Any] = {}
try:
    from benchmarks.kernels import KERNELS as _K  # type: ignore[import-not-found]

    KERNELS = dict(_K)
except Exception:  # pragma: no cover - kernels not available
    KERNELS = {}


def _apply(text: str, pipeline: str) -> ModuleOp:
    ctx = make_context()
    module = parse_module(ctx, text, "<test>")
    if pipeline:
        PassPipeline.parse_spec(get_all_passes(), pipeline).apply(ctx, module)
    module.verify()
    return module


@cache
def _autodiff_text(name: str, policy: str) -> str:
    return str(_apply(KERNELS[name].source("small"), f"tapeflow-autodiff{{policy={policy}}}"))


def _bits(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, float):
            out.append(struct.pack("<d", v))
        else:
            out.append(v)
    return out


def _run(module: ModuleOp, entry: str, args: list[Any]) -> list[Any]:
    """Runs `entry` on fresh copies of `args`; returns the results and every memref's bits."""
    from benchmarks.kernels.harness import to_memref  # type: ignore[import-not-found]
    from tapeflow.interpreters import make_interpreter

    values = [to_memref(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    results = make_interpreter(module).call_op(entry, tuple(values))
    observed = _bits(list(results))
    for v in values:
        if isinstance(v, ShapedArray):
            observed.append(_bits(list(v.data)))
    return observed


def _grad_args(name: str) -> list[Any]:
    kernel = KERNELS[name]
    arrays = kernel.inputs("small", seed=1)
    args: list[Any] = []
    for spec, a in zip(kernel.args, arrays):
        args.append(a)
        if spec.is_float:
            args.append(np.zeros_like(a))
    args.append(1.0)
    return args


def _record_bytes(module: ModuleOp) -> int:
    """Sum of the record sizes of the DRAM region tapes (the `tapeflow-layers` budget unit)."""
    total = 0
    for op in module.walk():
        if isinstance(op, region.AllocOp):
            t = op.tape.type
            assert isinstance(t, region.TapeType)
            if not t.in_spm and (op.static_count is None or op.static_count > 1):
                total += t.record.size
    return total


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


def _counts(module: ModuleOp) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in module.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def _check(text: str, entry: str, args: list[Any], extra: list[str] = ()) -> int:
    """Checks every pipeline of the grid on `text`; returns how many region tapes it has."""
    expected = _run(_apply(text, ""), entry, args)
    regions = _apply(text, "tapeflow-regions")
    record_bytes = _record_bytes(regions)
    for pipeline in [*_grid(record_bytes), *extra]:
        module = _apply(text, pipeline)
        assert _run(module, entry, args) == expected, pipeline
        counts = _counts(module)
        if "tapeflow-stream" in pipeline and record_bytes:
            assert counts.get("stream.commit", 0) > 0, pipeline
            assert counts.get("stream.prefetch", 0) > 0, pipeline
        if "lower-regions" in pipeline:
            assert not any(n.startswith("tape.") for n in counts), pipeline
    return counts_of(regions, "region.alloc")


def counts_of(module: ModuleOp, name: str) -> int:
    return _counts(module).get(name, 0)


POLICIES = ("min-tape", "cache-all")


@pytest.mark.skipif(not KERNELS, reason="benchmark kernels not available")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernel_gradients_identical(name: str, policy: str):
    text = _autodiff_text(name, policy)
    _check(text, KERNELS[name].grad_entry, _grad_args(name))


@pytest.mark.skipif(not KERNELS, reason="benchmark kernels not available")
@pytest.mark.parametrize(
    "options",
    ["spm-bytes=64 depth=1", "spm-bytes=200 depth=2 tile-bytes=40", "spm-bytes=4096 depth=4"],
)
@pytest.mark.parametrize("name", ["gemm", "lstm", "softmax_ce"])
def test_pipeline_gradients_identical(name: str, options: str):
    """`tapeflow{...}` on the primal computes the autodiff IR's gradients."""
    kernel = KERNELS[name]
    args = _grad_args(name)
    expected = _run(_apply(_autodiff_text(name, "min-tape"), ""), kernel.grad_entry, args)
    pipeline = f"tapeflow{{{options}}}"
    failure = None
    try:
        module = _apply(kernel.source("small"), pipeline)
    except PassFailedException as e:
        failure = str(e)
    if failure is not None:  # a scratchpad too small for this kernel: a clean failure
        assert "too small" in failure
        return
    assert _run(module, kernel.grad_entry, args) == expected


INPUTS = Path(__file__).parent / "Inputs"


def _hand_args(module_text: str, entry: str, ints: tuple[int, ...]) -> list[Any]:
    module = _apply(module_text, "")
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
    counts (inner, and outer loop with step 2), two regions in one loop body, and caches
    under scf.while/scf.if that stay tape caches."""
    text = (INPUTS / file).read_text()
    extra = [
        f"tapeflow-regions,tapeflow-stream{{tile-bytes={bytes_} depth=3}}" for bytes_ in (24, 40)
    ]
    assert _check(text, entry, _hand_args(text, entry, ints), extra) >= 2
    regions = _apply(text, "tapeflow-regions")
    if file == "nested_dynamic.mlir":
        # the scf.while and scf.if caches are left alone
        assert counts_of(regions, "tape.init") == 2
        assert counts_of(regions, "region.alloc") == 4
