"""Comparing two runs of one function (interpreter and native, or two pipelines):
results and memref arguments agree to a relative difference of `RTOL`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tapeflow.runner import RunResult

RTOL = 1e-12


def max_rel_diff(a: Any, b: Any) -> float:
    """Largest relative difference between two values (0 when equal, inf on mismatch)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return math.inf
        if a.dtype.kind != "f":
            return 0.0 if np.array_equal(a, b) else math.inf
        return max((max_rel_diff(float(x), float(y)) for x, y in zip(a.flat, b.flat)), default=0.0)
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return 0.0 if math.isnan(a) and math.isnan(b) else math.inf
        if a == b:
            return 0.0
        if math.isinf(a) or math.isinf(b):
            return math.inf
        return abs(a - b) / max(abs(a), abs(b))
    return 0.0 if (type(a), a) == (type(b), b) else math.inf


def assert_same_run(expected: RunResult, actual: RunResult) -> None:
    assert len(expected.results) == len(actual.results)
    for i, (e, a) in enumerate(zip(expected.results, actual.results)):
        assert max_rel_diff(e, a) <= RTOL, f"result {i}: {e!r} != {a!r}"
    assert expected.memref_positions == actual.memref_positions
    for p in expected.memref_positions:
        e, a = expected.arguments[p], actual.arguments[p]
        assert max_rel_diff(e, a) <= RTOL, f"memref argument {p} differs"


def copy_args(args: Sequence[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def assert_native_bits(module: Any, entry: str, args: Sequence[Any], label: str) -> None:
    """`entry` of `module` run natively gives the interpreter's results and memref bits."""
    from tapeflow import native
    from tapeflow.runner import run_function

    got = native.run_function_native(module, entry, copy_args(args))
    want = run_function(module, entry, copy_args(args))
    assert got.results == want.results, label
    assert got.memref_positions == want.memref_positions, label
    for p in got.memref_positions:
        assert np.asarray(got.arguments[p]).tobytes() == np.asarray(
            want.arguments[p]
        ).tobytes(), label
