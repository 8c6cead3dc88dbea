"""The xDSL interpreter set-up every TapeFlow tool shares.

`make_interpreter` registers xDSL's standard implementations, then `extra_ops` (the
arith and math ops of the semantics table `tapeflow.semantics`, replacing xDSL's, and
the memref, scf, affine and cf ops xDSL 0.74 lacks or gets wrong), and TapeFlow's three
dialects, and the `enzyme` ops Enzyme-MLIR's gradients keep.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters import register_implementations
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import LOCATED, op_error


def make_interpreter(
    module: ModuleOp,
    ctx: Context | None = None,
    listeners: Sequence[Interpreter.Listener] = (),
) -> Interpreter:
    """An interpreter for `module` that knows every op TapeFlow emits or accepts."""
    from tapeflow.interpreters.enzyme import EnzymeFunctions
    from tapeflow.interpreters.extra_ops import register_extra_ops
    from tapeflow.interpreters.region import RegionFunctions
    from tapeflow.interpreters.stream import StreamFunctions
    from tapeflow.interpreters.tape import TapeFunctions
    from tapeflow.registry import make_context

    interpreter = Interpreter(module, listeners=tuple(listeners))
    register_implementations(interpreter, ctx or make_context())
    register_extra_ops(interpreter)
    interpreter.register_implementations(TapeFunctions())
    interpreter.register_implementations(RegionFunctions())
    interpreter.register_implementations(StreamFunctions())
    interpreter.register_implementations(EnzymeFunctions())
    return interpreter


def runtime_error(error: BaseException, stack: list[Operation]) -> InterpretationError:
    """`error` of a run as one located line (the innermost op of `stack`), as every path
    (op-by-op, fast) reports it."""
    message = str(error)
    if isinstance(error, MemoryError):
        message = "out of memory"
    elif not isinstance(error, InterpretationError) or not message:
        detail = f"{type(error).__name__}: {message}" if message else type(error).__name__
        message = f"runtime error: {detail}"
    if stack and not LOCATED.match(message):
        message = op_error(stack[-1], message)
    return InterpretationError(message)
