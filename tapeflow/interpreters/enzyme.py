"""Interpreter functions for the `enzyme` dialect (Enzyme-MLIR's tape, as it leaves it).

A cache is a Python list used as a stack, as `tape.cache` is; a cache of memrefs keeps the
buffer itself (Enzyme keeps the reference). `enzyme.load`/`enzyme.store` are the checked
`memref.load`/`memref.store`, and check that their sizes are the buffer's dynamic sizes.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import op_error
from tapeflow.dialects import enzyme
from tapeflow.interpreters.extra_ops import element_offset


def _check_sizes(op: enzyme.LoadOp | enzyme.StoreOp, array: Any, sizes: Any) -> None:
    memref_type = op.memref.type
    assert isinstance(memref_type, MemRefType)
    dynamic = [n for n, d in zip(array.shape, memref_type.get_shape()) if d < 0]
    if list(sizes) != dynamic:
        raise InterpretationError(
            op_error(op, f"sizes {list(sizes)} are not the buffer's dynamic sizes {dynamic}")
        )


@register_impls
class EnzymeFunctions(InterpreterFunctions):
    @impl(enzyme.InitOp)
    def run_init(self, interpreter: Interpreter, op: enzyme.InitOp, args: PythonValues):
        return ([],)

    @impl(enzyme.PushOp)
    def run_push(self, interpreter: Interpreter, op: enzyme.PushOp, args: PythonValues):
        cache, value = args
        cache.append(value)
        return ()

    @impl(enzyme.PopOp)
    def run_pop(self, interpreter: Interpreter, op: enzyme.PopOp, args: PythonValues):
        cache: list[Any] = args[0]
        if not cache:
            raise InterpretationError(op_error(op, "pop on empty cache"))
        return (cache.pop(),)

    @impl(enzyme.StoreOp)
    def run_store(self, interpreter: Interpreter, op: enzyme.StoreOp, args: PythonValues):
        value, array = args[:2]
        indices = args[2 : 2 + len(op.indices)]
        _check_sizes(op, array, args[2 + len(op.indices) :])
        array.data_ptr[element_offset(op, array, indices)] = value
        return ()

    @impl(enzyme.LoadOp)
    def run_load(self, interpreter: Interpreter, op: enzyme.LoadOp, args: PythonValues):
        array = args[0]
        indices = args[1 : 1 + len(op.indices)]
        _check_sizes(op, array, args[1 + len(op.indices) :])
        return (array.data_ptr[element_offset(op, array, indices)],)
