"""Helpers shared by the pass-preservation tests (test_transforms_preserve, test_cleanup,
test_pipeline_grid) and the program fuzzer: apply a pipeline to MLIR text, run a function
in the interpreter and keep the bits of everything it produced.
"""

from __future__ import annotations

import copy
import functools
import hashlib
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
    "KERNELS", "applied", "apply", "bits", "grad_args", "op_counts", "region_record_bytes", "run",
    "run_stage", "stages",
]


@functools.lru_cache(maxsize=64)
def _parsed(text: str) -> ModuleOp:
    """`text` parsed once: the fuzzer and the preservation tests run several pipelines on
    one text, and parsing was most of their time. Never changed: `apply` works on clones
    (which keep the ops' locations and value names)."""
    return parse_module(make_context(), text, "<test>")


def apply(text: str, pipeline: str) -> ModuleOp:
    ctx = make_context()
    module = _parsed(text).clone()
    if pipeline:
        PassPipeline.parse_spec(get_all_passes(), pipeline).apply(ctx, module)
    module.verify()
    return module


@functools.lru_cache(maxsize=256)
def _applied(text: str, pipeline: str) -> ModuleOp:
    return apply(text, pipeline)


def applied(text: str, pipeline: str) -> ModuleOp:
    """`apply(text, pipeline)` computed once per text and pipeline, a clone of it for each
    call: for tests that only read the result (run it, count or print its ops) and ask for
    one stage many times. A clone holds the same IR but not the state the passes keep
    beside the module they ran on (`transforms.index_utils`' hoisted constants): a test
    that runs more passes on the result takes `apply`'s."""
    return _applied(text, pipeline).clone()


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


_RUNS: dict[tuple[str, str, str, bytes], list[Any]] = {}


def run_stage(text: str, pipeline: str, entry: str, args: list[Any]) -> list[Any]:
    """`run(applied(text, pipeline), entry, args)`, interpreted once per text, pipeline,
    entry and arguments (the interpreter is deterministic): for tests that compare many
    stages with one reference, some stages the same in every case of a grid."""
    key = (text, pipeline, entry, _arguments_key(args))
    if key not in _RUNS:
        if len(_RUNS) >= 2048:
            _RUNS.clear()
        _RUNS[key] = run(applied(text, pipeline), entry, args)
    return copy.deepcopy(_RUNS[key])


def _arguments_key(args: list[Any]) -> bytes:
    """The arguments' types, shapes and bits."""
    digest = hashlib.sha256()
    for a in args:
        if isinstance(a, np.ndarray):
            digest.update(f"|{a.dtype.str}{a.shape}".encode())
            digest.update(np.ascontiguousarray(a).tobytes())
        elif isinstance(a, float):
            digest.update(b"|f" + struct.pack("<d", a))
        else:
            digest.update(f"|{type(a).__name__}:{a!r}".encode())
    return digest.digest()


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
