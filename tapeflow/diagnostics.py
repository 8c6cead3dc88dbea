"""Source locations and the one place where errors become messages.

Library code raises xDSL's exceptions (`ParseError`, `VerifyException`,
`PassFailedException`, `InterpretationError`, all `DiagnosticException`s but the first).
Command-line tools wrap their body in `report_errors()`, which prints one
`error: file:line:col: ...` line on stderr (a parse error adds the source line and a
caret under it) and exits 1, with no Python traceback and never the whole module.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import cf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Span

_INT64_MIN, _INT64_END = -(1 << 63), 1 << 63
LOCATED = re.compile(r"^\S+:\d+:\d+: ")
"""Matches a message that starts with its `file:line:col`."""
_UNREGISTERED = re.compile(r"^Operation (\S+) is not registered$")


class ToolError(Exception):
    """A user error found by a command-line tool itself (bad argument, missing file...)."""


# ---------------------------------------------------------------------------------------
# Reading and parsing


def read_source(path: str) -> tuple[str, str]:
    """The text of `path` (`-`: standard input) and the name diagnostics call it by."""
    if path == "-":
        return decode_source(sys.stdin.buffer.read(), "<stdin>"), "<stdin>"
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ToolError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{path}: is a directory") from None
    except OSError as e:
        raise ToolError(f"{path}: cannot read ({e.strerror})") from None
    return decode_source(data, path), path


def decode_source(data: bytes, name: str) -> str:
    """`data` as UTF-8; an invalid byte is a ToolError at its `file:line:col`."""
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ToolError(
            f"{name}:{line}:{col}: invalid UTF-8 (byte 0x{data[e.start]:02x})"
        ) from None


def check_string_literals(text: str, name: str, line_offset: int = 0) -> None:
    r"""Fails at the first string literal that does not close on its line.

    Why: xDSL 0.74's string-literal regex (`xdsl/utils/mlir_lexer.py`,
    `"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"`) backtracks
    exponentially when the quote never closes. Minimal case for upstream: a line `"`
    followed by N letters `a`; `re.match` of that regex took 0.15 s for N=20, 0.6 s for
    22, 2.6 s for 24 (Python 3.11), four times more per two letters. This scan accepts
    exactly what the regex accepts, in linear time, skipping `//` comments.
    """
    pos, n = 0, len(text)
    while pos < n:
        ch = text[pos]
        if ch == "/" and text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = n if end < 0 else end
        elif ch == '"':
            pos = _string_end(text, pos, name, line_offset)
        else:
            pos += 1


def _string_end(text: str, start: int, name: str, line_offset: int) -> int:
    pos, n = start + 1, len(text)
    while pos < n:
        ch = text[pos]
        if ch == '"':
            return pos + 1
        if ch in "\n\v\f":
            break
        if ch == "\\":
            nxt = text[pos + 1 : pos + 3]
            if nxt[:1] in ('"', "n", "t", "\\") and nxt[:1]:
                pos += 2
                continue
            if len(nxt) == 2 and all(c in "0123456789abcdefABCDEF" for c in nxt):
                pos += 3
                continue
            line, col = _line_col(text, pos)
            raise ToolError(f"{name}:{line + line_offset}:{col}: invalid escape in string")
        pos += 1
    line, col = _line_col(text, start)
    raise ToolError(f"{name}:{line + line_offset}:{col}: unterminated string")


def _line_col(text: str, pos: int) -> tuple[int, int]:
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


class LocatingParser(Parser):
    """A parser that gives every op the `file:line:col` it was written at.

    xDSL 0.74 leaves `op.location` unknown unless the text says `loc(...)`; diagnostics
    want to point at the source, so record where each op starts. It also puts a location
    on what xDSL reports without one: an undefined SSA value (at its first use, not at
    the end of the file), a failure while building an attribute (`!tape.cache<>`, an
    integer too large for its type) and nesting too deep for Python's stack.
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        check_string_literals(text, name, line_offset)
        super().__init__(ctx, text, name)
        self._line_offset = line_offset
        self._first_use: dict[str, Span] = {}
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        """Where each line ends: xDSL's `Span.get_location` counts the newlines from the
        start of the text for every op, quadratic in the file; a bisect here is not."""

    def _location(self, pos: int) -> tuple[str, int, int]:
        """`(file, line, col)` of `pos`, the line counted from the chunk's first line."""
        before = bisect_left(self._newlines, pos)
        line_start = self._newlines[before - 1] + 1 if before else 0
        return self.lexer.input.name, before + 1 + self._line_offset, pos - line_start + 1

    def parse_operation(self) -> Operation:
        start = Span(self.pos, self.pos, self.lexer.input)
        try:
            op = super().parse_operation()
        except ParseError as e:
            raise self._at_op_name(e, start.start) from None
        except RecursionError:
            raise
        except DiagnosticException as e:  # a verifier run while building an attribute
            if LOCATED.match(str(e)):
                raise
            file, line, col = self._location(start.start)
            raise type(e)(f"{file}:{line}:{col}: {_python_message(e)}") from None
        except Exception as e:  # raised while building an op or an attribute
            raise ParseError(start, _python_message(e)) from None
        if not isinstance(op.location, FileLineColLoc):
            file, line, col = self._location(start.start)
            op.location = FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(col))
        return op

    def _at_op_name(self, error: ParseError, start: int) -> ParseError:
        """xDSL puts "Operation X is not registered" at the token after X: move it to X."""
        unknown = _UNREGISTERED.match(error.msg)
        text = self.lexer.input.content
        if unknown is None or not isinstance(text, str):
            return error
        name = unknown.group(1)
        before = text[start : error.span.start].rstrip()
        for spelling in (name, f'"{name}"'):
            if before.endswith(spelling):
                at = start + len(before) - len(spelling)
                return ParseError(Span(at, at + len(spelling), self.lexer.input), error.msg)
        return error

    def resolve_operand(self, operand, type):  # type: ignore[override]
        name = operand.operand_name
        if name not in self.ssa_values:
            self._first_use.setdefault(name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            raise ParseError(
                Span(self.pos, self.pos, self.lexer.input), "input nests too deeply"
            ) from None
        except ParseError as e:
            undefined = [n for n in self.forward_ssa_references if n in self._first_use]
            if e.msg.startswith("values used but not defined") and undefined:
                raise ParseError(
                    self._first_use[undefined[0]], f"use of undefined value %{undefined[0]}"
                ) from None
            raise


def _python_message(error: Exception) -> str:
    """The message of an exception raised by Python or xDSL inside the parser, as ours."""
    text = str(error)
    if "Exceeds the limit" in text and "digits" in text:
        return "integer literal too long (more than 4300 digits)"
    if type(error) in _PYTHON_BUGS or not text:
        return f"internal error: {type(error).__name__}: {text}".rstrip(": ")
    # A verifier's or a constructor's message (some raise a bare Exception), on one line.
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


# Exceptions that mean a bug in the code that raised them, not a message for the user.
_PYTHON_BUGS = {AttributeError, AssertionError, IndexError, KeyError, NameError, TypeError}


class LocatedPrinter(Printer):
    """A printer whose `print_debuginfo` output reads back.

    xDSL 0.74 prints a location in `print_operation_type` and again after every custom-
    format op, so ops whose custom syntax contains their type (`scf.while`) get a
    `loc(...)` before their regions, which neither xDSL nor upstream MLIR parses. Here the
    type's location is printed only for generic-format ops (whose only one it is)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._generic_ops: list[Operation] = []

    def print_op_with_default_format(self, op: Operation) -> None:
        self._generic_ops.append(op)
        try:
            super().print_op_with_default_format(op)
        finally:
            self._generic_ops.pop()

    def print_operation_type(self, op: Operation) -> None:
        if self._generic_ops and self._generic_ops[-1] is op:
            super().print_operation_type(op)
        else:
            self.print_function_type(op.operand_types, op.result_types)


def parse_module(ctx: Context, text: str, name: str = "<stdin>") -> ModuleOp:
    """Parses MLIR `text` into a module whose ops carry their source locations.

    C input is `tapeflow.runner.load_module`'s business: diagnostics sits below every
    frontend, so it imports none of them."""
    return LocatingParser(ctx, text, name).parse_module()


# ---------------------------------------------------------------------------------------
# Verifying


def verify_module(module: ModuleOp) -> None:
    """`module.verify()`, with the failing op's `file:line:col` instead of a module dump,
    plus the checks mlir-opt makes that xDSL 0.74 does not (see `_upstream_rules`)."""
    try:
        module.verify()
    except Exception as e:  # most verifiers raise VerifyException, some a bare Exception
        raise VerifyException(_locate_failure(module, e)) from None
    for op in module.walk():
        if (problem := _upstream_rules(op)) is not None:
            raise VerifyException(op_error(op, problem))


def _locate_failure(module: ModuleOp, error: Exception) -> str:
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except Exception as e:
            return op_error(op, _python_message(e))
    return _python_message(error)


def _upstream_rules(op: Operation) -> str | None:
    """What mlir-opt-22 rejects in `op` and xDSL 0.74 accepts, or None."""
    for attr in [*op.properties.values(), *op.attributes.values()]:
        if (
            isinstance(attr, IntegerAttr)
            and isinstance(attr.type, IndexType)
            and not _INT64_MIN <= attr.value.data < _INT64_END
        ):
            return f"integer constant {attr.value.data} out of range for index (64 bits)"
    values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
    for value in values:
        if (problem := _type_problem(value.type)) is not None:
            return problem
    if isinstance(op, cf.BranchOp):
        return _successor_problem(op.arguments, op.successor, 0)
    if isinstance(op, cf.ConditionalBranchOp):
        return _successor_problem(op.then_arguments, op.then_block, 0) or _successor_problem(
            op.else_arguments, op.else_block, 1
        )
    return None


def _type_problem(t: Attribute) -> str | None:
    if isinstance(t, MemRefType):
        for d in t.get_shape():
            if d >= _INT64_END:
                return f"memref dimension {d} does not fit in 64 bits ({t})"
    return None


def _successor_problem(operands, block, index: int) -> str | None:
    if len(operands) != len(block.args):
        return (
            f"successor #{index} takes {len(block.args)} argument(s), "
            f"given {len(operands)}"
        )
    for i, (value, arg) in enumerate(zip(operands, block.args)):
        if value.type != arg.type:
            return (
                f"type mismatch for block argument #{i} of successor #{index}: "
                f"{value.type} passed to {arg.type}"
            )
    return None


# ---------------------------------------------------------------------------------------
# Messages


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


def format_parse_error(error: ParseError) -> str:
    """`file:line:col: message`, then the source line with a caret under the span."""
    span = error.span
    loc = span.get_location()
    text = span.input.content
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.start)
    source = text[line_start : line_end if line_end >= 0 else len(text)]
    column = span.start - line_start
    if len(source) > 100:  # show the 100 characters around the caret
        cut = max(0, min(column - 50, len(source) - 100))
        source, column = source[cut : cut + 100], column - cut
    caret = " " * column + "^"
    return f"{loc.file}:{loc.line}:{loc.col}: {error.msg}\n  {source}\n  {caret}"


@contextmanager
def report_errors() -> Iterator[None]:
    """Turns every failure into `error: ...` on stderr and exit code 1.

    An exception nobody expected is still one `error:` line (saying it is an internal
    error), so a user never sees a traceback; the tests count those as bugs."""
    try:
        yield
    except ParseError as e:
        _fail(format_parse_error(e))
    except DiagnosticException as e:
        _fail(str(e))  # not its __notes__: xDSL puts a dump of the whole module there
    except ArgSpecParseError as e:
        _fail(str(e))
    except (ToolError, OSError, ValueError) as e:
        _fail(str(e))
    except RecursionError:
        _fail("input nests too deeply")
    except MemoryError:
        _fail("out of memory")
    except Exception as e:
        _fail(f"internal error: {type(e).__name__}: {e}")


def _fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(1)
