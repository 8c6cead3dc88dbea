"""Helpers shared by the pass-preservation tests (test_transforms_preserve, test_cleanup,
test_pipeline_grid and the frontend and transform tests that compare stages): apply a
pipeline to MLIR text, run a function in the interpreter and keep the bits of everything
it produced.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.passes import PassPipeline

from tapeflow.eval.bundled import KERNELS
from tapeflow.eval.jobs import kernel_arguments
from tapeflow.dialects import region
from tapeflow.diagnostics import parse_module
from tapeflow.registry import get_all_passes, make_context

__all__ = [
    "KERNELS", "apply", "bits", "op_counts", "grad_args", "region_record_bytes", "run", "stages",
]


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> ModuleOp:
    """`text` parsed once: the preservation tests run several pipelines on one text, and
    parsing was most of their time. Never changed: `apply` works on clones (which keep
    the ops' locations and value names)."""
    return parse_module(make_context(), text, "<test>")


def apply(text: str, pipeline: str) -> ModuleOp:
    ctx = make_context()
    module = _parsed(text).clone()
    if pipeline:
        PassPipeline.parse_spec(get_all_passes(), pipeline).apply(ctx, module)
    module.verify()
    return module


def bits(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, float):
            out.append(struct.pack("<d", v))
        else:
            out.append(v)
    return out


def run(module: ModuleOp, entry: str, args: list[Any]) -> list[Any]:
    """Runs `entry` on fresh copies of `args`; returns the results and every memref's bits."""
    from benchmarks.kernels.harness import to_memref  # type: ignore[import-not-found]
    from tapeflow.interpreters import make_interpreter

    values = [to_memref(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    results = make_interpreter(module).call_op(entry, tuple(values))
    observed = bits(list(results))
    for v in values:
        if isinstance(v, ShapedArray):
            observed.append(bits(list(v.data)))
    return observed


def grad_args(name: str) -> list[Any]:
    """`@<name>_grad`'s arguments at the small size, inputs drawn with seed 1."""
    return kernel_arguments(name, "small", seed=1)


def region_record_bytes(module: ModuleOp) -> int:
    """Sum of the record sizes of the DRAM region tapes (the `tapeflow-layers` budget unit)."""
    total = 0
    for op in module.walk():
        if isinstance(op, region.AllocOp):
            t = op.tape.type
            assert isinstance(t, region.TapeType)
            if not t.in_spm and (op.static_count is None or op.static_count > 1):
                total += t.record.size
    return total


def op_counts(module: ModuleOp) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in module.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def stages(fn: str, depth: int, spm: int) -> list[str]:
    """The pipelines after `tapeflow-autodiff{functions=fn}` whose gradients must keep its
    bits: regions, lowered regions, layers, stream, and `tapeflow{mode=always}` (with
    cleanup too), at scratchpad depth `depth` and `spm` bytes."""
    ad = f"tapeflow-autodiff{{functions={fn}}}"
    layers = f"{ad},tapeflow-regions,tapeflow-layers{{depth={depth} spm-bytes={spm}}}"
    always = f"functions={fn} depth={depth} spm-bytes={spm} mode=always"
    return [
        f"{ad},tapeflow-regions",
        f"{ad},tapeflow-regions,tapeflow-lower-regions",
        layers,
        f"{layers},tapeflow-stream{{depth={depth}}}",
        f"tapeflow{{{always}}}",
        f"tapeflow{{{always} cleanup=true}}",
    ]
