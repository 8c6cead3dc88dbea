"""Interpreter functions for the `tape` dialect: a cache is a Python list used as a stack."""

from __future__ import annotations

from typing import Any

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import op_error
from tapeflow.dialects import tape


@register_impls
class TapeFunctions(InterpreterFunctions):
    @impl(tape.InitOp)
    def run_init(self, interpreter: Interpreter, op: tape.InitOp, args: PythonValues):
        return ([],)

    @impl(tape.PushOp)
    def run_push(self, interpreter: Interpreter, op: tape.PushOp, args: PythonValues):
        cache, value = args
        cache.append(value)
        return ()

    @impl(tape.PopOp)
    def run_pop(self, interpreter: Interpreter, op: tape.PopOp, args: PythonValues):
        cache: list[Any] = args[0]
        if not cache:
            raise InterpretationError(op_error(op, "pop on empty cache"))
        return (cache.pop(),)

    @impl(tape.FreeOp)
    def run_free(self, interpreter: Interpreter, op: tape.FreeOp, args: PythonValues):
        cache: list[Any] = args[0]
        if cache:
            raise InterpretationError(
                op_error(op, f"cache freed with {len(cache)} value(s) never popped")
            )
        return ()
