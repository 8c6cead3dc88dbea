"""Checks TapeFlow's IR with upstream MLIR's own parser and verifier, in process.

Upstream MLIR does not know our dialects, so a module is exported with our ops in generic
form (upstream ops keep their custom syntax) and parsed with unregistered dialects
allowed: upstream then checks everything it does know (builtin, func, scf, arith, math,
memref, cf, affine: operand and result types, regions, symbols, dominance) and accepts
our ops as opaque.

The Python bindings come from the optional extra `tapeflow[mlir]`
(`pip install -e '.[mlir]'`): PyPI's `iree-base-compiler` ships the upstream bindings as
`iree.compiler.ir` (PyPI's `mlir-python-bindings` is only a placeholder). An IREE context
registers IREE's own dialects, among them one named `stream`, so our `stream.*` ops and
`!stream.fifo` types would be parsed by IREE's dialect and rejected ("unknown type `fifo`
in dialect `stream`"). On export only, our three dialect prefixes are therefore renamed
(`EXPORT_PREFIXES`: `stream.` -> `tapeflow_stream.`, likewise `tape.` and `region.`);
TapeFlow's own IR keeps its names.
"""

from __future__ import annotations

import io
import re
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

OUR_DIALECTS = ("tape", "region", "stream")
EXPORT_PREFIXES = {name: f"tapeflow_{name}" for name in OUR_DIALECTS}
"""Our dialect name -> the name it gets in the exported text."""

INSTALL_HINT = (
    "the upstream MLIR Python bindings are missing: install the optional extra with "
    "`pip install -e '.[mlir]'` (PyPI's iree-base-compiler, which provides iree.compiler.ir)"
)

_OP_NAME = re.compile(r'(?<![\w.])"(' + "|".join(OUR_DIALECTS) + r')\.([\w.$]+)"(?=\s*\()')
_TYPE_OR_ATTR = re.compile(r"([!#])(" + "|".join(OUR_DIALECTS) + r")\.")


class UpstreamVerifyException(DiagnosticException):
    """Upstream MLIR rejected the module; the message is upstream's."""


class _ExportPrinter(Printer):
    """Prints our ops in generic form and upstream ops in their custom syntax."""

    def print_op(self, op: Operation) -> None:
        saved = self.print_generic_format
        self.print_generic_format = saved or op.dialect_name() in OUR_DIALECTS
        try:
            super().print_op(op)
        finally:
            self.print_generic_format = saved


def export_for_upstream(module: ModuleOp, generic: bool = False) -> str:
    """`module` as text upstream MLIR parses: our ops in generic form (upstream cannot know
    their syntax) and renamed (see the module docstring); upstream ops in their custom
    syntax, as a user writes them and as `mlir-opt` reads them, or generic with
    `generic=True`.

    The custom syntax is the default because xDSL 0.74's generic form is not always the
    same op: it parses `affine.load %A[%i, %j]` into a map over symbols
    (`()[s0, s1] -> (s0, s1)`), which upstream rejects for loop indices, while the custom
    form reads back as dimensions."""
    out = io.StringIO()
    printer = (
        Printer(stream=out, print_generic_format=True) if generic else _ExportPrinter(stream=out)
    )
    printer.print_op(module)
    return rename_for_export(out.getvalue() + "\n")


def export_generic(module: ModuleOp) -> str:
    """`module` entirely in generic form, our dialects renamed."""
    return export_for_upstream(module, generic=True)


def rename_for_export(text: str) -> str:
    """Renames our generic op names (`"stream.commit"(`), types and attributes (`!stream.`,
    `#stream.`) to their `tapeflow_` names; leaves every other text alone."""
    text = _OP_NAME.sub(lambda m: f'"{EXPORT_PREFIXES[m.group(1)]}.{m.group(2)}"', text)
    return _TYPE_OR_ATTR.sub(lambda m: f"{m.group(1)}{EXPORT_PREFIXES[m.group(2)]}.", text)


def bindings_available() -> bool:
    try:
        _ir()
    except ImportError:
        return False
    return True


def _ir() -> Any:
    from iree.compiler import ir  # type: ignore[import-not-found]

    return ir


def verify_with_upstream(module: ModuleOp | str) -> None:
    """Parses and verifies `module` with upstream MLIR; raises `UpstreamVerifyException`.

    `module` is an xDSL module (exported with `export_for_upstream`) or text upstream
    can parse (generic form for our ops).
    """
    text = export_for_upstream(module) if isinstance(module, ModuleOp) else module
    try:
        ir = _ir()
    except ImportError as e:
        raise UpstreamVerifyException(INSTALL_HINT) from e
    context = ir.Context()
    context.allow_unregistered_dialects = True
    try:
        with context:
            parsed = ir.Module.parse(text)
            if not parsed.operation.verify():
                raise UpstreamVerifyException("upstream MLIR: the module does not verify")
    except ir.MLIRError as e:
        raise UpstreamVerifyException(f"upstream MLIR rejects the module: {_message(e)}") from e


def _message(error: Any) -> str:
    lines = [str(getattr(error, "message", "")) or str(error)]
    for diagnostic in getattr(error, "error_diagnostics", []):
        lines.append(f"{diagnostic.location}: {diagnostic.message}")
        for note in getattr(diagnostic, "notes", []):
            lines.append(f"  note: {note.location}: {note.message}")
    return "\n".join(line for line in lines if line)
