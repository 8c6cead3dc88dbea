"""Running benchmark kernels in the xDSL interpreter with NumPy arrays.

`to_memref` converts a NumPy array into the interpreter's `ShapedArray`
(f64 -> float64 buffer, i32 -> int32, i64 -> int64, bool -> i1 kept as Python ints);
`run(module, entry, args)` calls `entry` and returns its results (memref arguments are
updated in place, as the program writes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr

from tapeflow.diagnostics import parse_module
from tapeflow.registry import make_context


def to_memref(a: np.ndarray) -> ShapedArray:
    flat = [x.item() for x in np.ascontiguousarray(a).reshape(-1)]
    if a.dtype == np.float64:
        ptr = TypedPtr.new_float64(flat)
    elif a.dtype == np.int32:
        ptr = TypedPtr.new_int32(flat)
    elif a.dtype == np.int64:
        ptr = TypedPtr.new_int64(flat)
    else:
        raise TypeError(f"unsupported dtype {a.dtype}")
    return ShapedArray(ptr, list(a.shape))


def parse(text: str, name: str = "<kernel>") -> ModuleOp:
    ctx = make_context()
    module = parse_module(ctx, text, name)
    module.verify()
    return module


def interpreter(module: ModuleOp, listeners: Sequence[Interpreter.Listener] = (),
                functions: Sequence[Any] = ()) -> Interpreter:
    """`make_interpreter`, plus `functions` (InterpreterFunctions) overriding its ops."""
    from tapeflow.interpreters import make_interpreter

    interp = make_interpreter(module, listeners=listeners)
    for f in functions:
        interp.register_implementations(f, override=True)
    return interp


def run(module: ModuleOp, entry: str, args: Sequence[Any],
        listeners: Sequence[Interpreter.Listener] = (),
        functions: Sequence[Any] = ()) -> tuple[Any, ...]:
    """Calls `entry` with `args` (NumPy arrays become fresh memrefs; scalars stay).

    Returns `(results, memrefs)`: the function's results and the memref objects passed in
    (to read back what the program wrote)."""
    values: list[Any] = []
    for a in args:
        values.append(to_memref(a) if isinstance(a, np.ndarray) else a)
    interp = interpreter(module, listeners, functions)
    results = interp.call_op(entry, tuple(values))
    return tuple(results), values
