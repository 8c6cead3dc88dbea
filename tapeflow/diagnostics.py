"""Source locations and the one place where errors become messages.

Library code raises xDSL's exceptions (`ParseError`, `VerifyException`,
`PassFailedException`, `InterpretationError`, all `DiagnosticException`s but the first).
Command-line tools wrap their body in `report_errors()`, which prints `error: ...` on
stderr and exits 1, with no Python traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError


class LocatingParser(Parser):
    """A parser that gives every op the `file:line:col` it was written at.

    xDSL 0.74 leaves `op.location` unknown unless the text says `loc(...)`; diagnostics
    want to point at the source, so record where each op starts.
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._line_offset = line_offset

    def parse_operation(self) -> Operation:
        start = self._current_token.span.get_location()
        op = super().parse_operation()
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file),
                IntAttr(start.line + self._line_offset),
                IntAttr(start.col),
            )
        return op


def parse_module(ctx: Context, text: str, name: str = "<stdin>") -> ModuleOp:
    """Parses `text` into a module whose ops carry their source locations."""
    return LocatingParser(ctx, text, name).parse_module()


def location_of(op: Operation) -> str | None:
    """`file:line:col` of `op`, or of its closest located ancestor; None if unknown."""
    current: Operation | None = op
    while current is not None:
        loc = current.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        current = current.parent_op()
    return None


def op_error(op: Operation, message: str) -> str:
    """`file:line:col: 'dialect.op' message`, the shape of every op diagnostic we emit."""
    where = location_of(op)
    prefix = f"{where}: " if where else ""
    return f"{prefix}'{op.name}' {message}"


class ToolError(Exception):
    """A user error found by a command-line tool itself (bad argument, missing file...)."""


@contextmanager
def report_errors() -> Iterator[None]:
    """Turns every expected failure into `error: ...` on stderr and exit code 1."""
    try:
        yield
    except ParseError as e:
        _fail(str(e))
    except DiagnosticException as e:
        notes = getattr(e, "__notes__", [])
        _fail("\n".join([str(e), *notes]))
    except (ToolError, ValueError, OSError, ArgSpecParseError) as e:
        _fail(str(e))
    except RecursionError:
        _fail("input nests too deeply")


def _fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(1)
