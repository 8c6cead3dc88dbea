"""Checks TapeFlow's IR with upstream MLIR's own parser and verifier, in process.

Upstream MLIR does not know our dialects, so a module is exported with our ops in generic
form (upstream ops keep their custom syntax) and parsed with unregistered dialects
allowed: upstream then checks everything it does know (builtin, func, scf, arith, math,
memref, cf, affine: operand and result types, regions, symbols, dominance) and accepts
our ops as opaque.

Without the bindings, `mlir-opt-22 --allow-unregistered-dialect` (Debian's
`mlir-22-tools`) does the same check in a subprocess. The Python bindings come from the
optional extra `tapeflow[mlir]`
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
import os
import re
import shutil
import subprocess
from typing import Any

from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import (
    PatternRewriteWalker,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
)
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from tapeflow.diagnostics import LocatedPrinter
from tapeflow.dialects.region import is_spm

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


class _ExportPrinter(LocatedPrinter):
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
    form reads back as dimensions. Ops keep their `loc("file":line:col)`, so upstream's
    diagnostics point at the source."""
    module = _spm_memory_space_as_string(module)
    out = io.StringIO()
    printer = (
        Printer(stream=out, print_generic_format=True)
        if generic
        else _ExportPrinter(stream=out, print_debuginfo=True)
    )
    printer.print_op(module)
    return rename_for_export(out.getvalue() + "\n")


SPM_MEMORY_SPACE = StringAttr("tapeflow_stream.spm")
"""How `memref<..., #stream.spm>` is exported: upstream's memref verifier accepts integer,
string and registered-dialect memory spaces, but not an unregistered `#dialect.attr`
("unsupported memory space Attribute")."""


class _SpmAsString(TypeConversionPattern):
    recursive = True

    @attr_type_rewrite_pattern
    def convert_type(self, typ: MemRefType[Attribute]) -> Attribute | None:
        if is_spm(typ.memory_space):
            return MemRefType(typ.element_type, typ.shape, typ.layout, SPM_MEMORY_SPACE)
        return None


def _spm_memory_space_as_string(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with `SPM_MEMORY_SPACE` on scratchpad memrefs (or `module`
    itself when it has none)."""
    if "#stream.spm" not in str(module):
        return module
    module = module.clone()
    PatternRewriteWalker(_SpmAsString()).rewrite_module(module)
    return module


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


def verify_with_upstream(module: ModuleOp | str, backend: str = "auto") -> None:
    """Parses and verifies `module` with upstream MLIR; raises `UpstreamVerifyException`.

    `module` is an xDSL module (exported with `export_for_upstream`) or text upstream
    can parse (generic form for our ops). `backend`: `"bindings"` (in process,
    `iree.compiler.ir`), `"mlir-opt"` (`mlir-opt-22 --allow-unregistered-dialect`, a
    subprocess), or `"auto"`: the bindings when installed, else mlir-opt-22.
    """
    text = export_for_upstream(module) if isinstance(module, ModuleOp) else module
    if backend == "auto":
        if bindings_available():
            backend = "bindings"
        elif _mlir_opt() is not None:
            backend = "mlir-opt"
        else:
            raise UpstreamVerifyException(
                f"{INSTALL_HINT}; or install mlir-opt-22 (apt-get install -y mlir-22-tools)"
            )
    if backend == "mlir-opt":
        _verify_with_mlir_opt(text)
        return
    if backend != "bindings":
        raise ValueError(f"unknown upstream backend '{backend}' (auto, bindings, mlir-opt)")
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


def _mlir_opt() -> str | None:
    return shutil.which("mlir-opt-22")


def _verify_with_mlir_opt(text: str) -> None:
    tool = _mlir_opt()
    if tool is None:
        raise UpstreamVerifyException(
            INSTALL_HINT + ", or install mlir-opt-22 (apt-get install -y mlir-22-tools)"
        )
    done = subprocess.run(
        [tool, "--allow-unregistered-dialect", "--verify-each", "-o", os.devnull],
        input=text,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        message = done.stderr.strip() or f"mlir-opt-22 exit status {done.returncode}"
        # mlir-opt says `file:line:col: error: msg`; print it as the bindings path does.
        message = re.sub(r"^(\S+:\d+:\d+): error: ", r"\1: ", message, flags=re.MULTILINE)
        raise UpstreamVerifyException(f"upstream MLIR rejects the module: {message}")


def _message(error: Any) -> str:
    """`file:line:col: message` lines (with notes) from an `MLIRError`."""
    diagnostics = list(getattr(error, "error_diagnostics", []))
    if not diagnostics:
        return str(getattr(error, "message", "")) or str(error)
    lines: list[str] = []
    for diagnostic in diagnostics:
        lines.append(f"{_where(diagnostic.location)}: {diagnostic.message}")
        for note in getattr(diagnostic, "notes", []):
            lines.append(f"{_where(note.location)}: note: {note.message}")
    return "\n".join(lines)


_LOC = re.compile(r'^loc\("(.*)":(\d+):(\d+)\)$')


def _where(location: Any) -> str:
    text = str(location)
    match = _LOC.match(text)
    return f"{match.group(1)}:{match.group(2)}:{match.group(3)}" if match else text
