"""`enzyme-autodiff`: the gradient real Enzyme-MLIR makes, in place of our AD's.

Enzyme-MLIR ships in the `enzyme-ad` wheel (Enzyme-JAX) as one self-contained library,
`enzyme_ad/jax/enzyme_call.so`, built on LLVM/MLIR trunk. It is loaded by its path so
that jax, which the wheel's package imports, is never needed (the optional extra
`enzyme`; the wheel is installed with `--no-deps`), in a process of its own
(`run_pipeline`). Its `run_pass_pipeline` runs

    enzyme-wrap{infn=F outfn=F_grad argTys=... retTys=... mode=ReverseModeCombined},
    remove-unnecessary-enzyme-ops,enzyme-simplify-math,canonicalize

on the module's text after what LLVM does before Enzyme runs (`pre_enzyme.STEPS`: calls
inlined, loops from 0 by 1, accumulators in registers; on Enzyme's copy only), and the
result is parsed back with its cache ops as the `enzyme` dialect. The activities are
ours (`tapeflow.convention.shadowed`): float memrefs not marked `tapeflow.const` are
`enzyme_dup`, float scalars `enzyme_active`, the rest `enzyme_const`; float results are
`enzyme_active`. So `@F_grad` has our AD's name and
calling convention (each shadow after its primal, the seeds last, the active scalars'
gradients returned), and every tool runs it as it runs ours.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.builder import Builder
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.passes import ModulePass
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import ParseError, PassFailedException

from tapeflow.baselines import pre_enzyme
from tapeflow.diagnostics import LocatingParser, location_of, op_error
from tapeflow.convention import is_float_type, shadowed
from tapeflow.dialects import enzyme
from tapeflow.transforms.autodiff import AUTODIFF_ATTR
from tapeflow.transforms.lower_tape import TAPE_ATTR

ENZYME_AD = "enzyme-ad==0.0.16"
"""The pinned wheel: Enzyme-MLIR's pass names and syntax follow Enzyme's trunk."""

EXTRA = "enzyme"
MISSING = (
    f"Enzyme-MLIR is not installed: it is TapeFlow's optional extra `{EXTRA}` "
    f"(`pip install --no-deps {ENZYME_AD}`; scripts/setup installs it)"
)

CLEANUP = "remove-unnecessary-enzyme-ops,enzyme-simplify-math,canonicalize"
"""What follows `enzyme-wrap`: Enzyme's own simplifications of the tape it made. Not
`canonicalize` first: in 0.0.16 it hoists the pushes of loop-invariant values out of the
forward loop while their pops stay in the reverse one (small lstm then pops an empty
cache)."""


KNOWN_BUGS: dict[str, str] = {}
"""Kernels whose Enzyme-MLIR gradient is wrong by a bug of Enzyme's that the steps before it
(`pre_enzyme.STEPS`) do not avoid, each reduced to a few ops in
test/python/transforms/test_enzyme_mlir_bugs.py (which fails once it is fixed): the
bench says why beside the kernel's disagreement or failure. None today: the three bugs
reduced there broke salam/alexnet, logsum and lenet until the steps avoided them."""


def available() -> bool:
    """Whether the `enzyme` extra is installed (without loading it)."""
    return _library_path() is not None


def _library_path() -> Path | None:
    spec = importlib.util.find_spec("enzyme_ad")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / "jax" / "enzyme_call.so"
        if path.is_file():
            return path
    return None


@cache
def library() -> Path:
    """Enzyme-MLIR's library, checked to be the pinned version (not loaded here)."""
    path = _library_path()
    if path is None:
        raise PassFailedException(MISSING)
    version = importlib.metadata.version("enzyme-ad")
    if f"enzyme-ad=={version}" != ENZYME_AD:
        raise PassFailedException(f"needs {ENZYME_AD} (its pass syntax), found {version}")
    return path


def activities(f: func.FuncOp) -> tuple[list[str], list[str]]:
    """`enzyme-wrap`'s argTys and retTys for `f`: our AD's activities."""
    dup = shadowed(f)
    const = {i for i, d in enumerate(f.arg_attrs or ()) if "tapeflow.const" in d.data}
    args = [
        "enzyme_dup" if p in dup
        else "enzyme_active" if is_float_type(t) and p not in const
        else "enzyme_const"
        for p, t in enumerate(f.function_type.inputs.data)
    ]  # fmt: skip
    results = [
        "enzyme_active" if is_float_type(t) else "enzyme_const" for t in f.function_type.outputs.data
    ]
    return args, results


def wrap_pipeline(f: func.FuncOp, grad_name: str) -> str:
    """The pass pipeline that makes `@grad_name` from `f` in Enzyme-MLIR."""
    args, results = activities(f)
    wrap = (
        f"enzyme-wrap{{infn={f.sym_name.data} outfn={grad_name} argTys={','.join(args)} "
        f"retTys={','.join(results)} mode=ReverseModeCombined}}"
    )
    return f"{wrap},{CLEANUP}"


_SERVER = """
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("enzyme_call", sys.argv[1])
library = importlib.util.module_from_spec(spec)
spec.loader.exec_module(library)
requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing else written can corrupt a reply
while header := requests.readline():
    sizes = [int(n) for n in header.split()]
    pipeline, text = (requests.read(n).decode() for n in sizes)
    os.ftruncate(2, 0)  # stderr, a file: the library's diagnostics for this request
    os.lseek(2, 0, os.SEEK_SET)
    try:
        _, out = library.run_pass_pipeline([], text, pipeline)
        status = 0
    except ValueError as e:
        os.write(2, str(e).encode())
        os.lseek(2, 0, os.SEEK_SET)
        status, out = 3, os.read(2, 1 << 24).decode(errors="replace")
    reply = out.encode()
    replies.write(b"%d %d\\n" % (status, len(reply)) + reply)
    replies.flush()
"""
"""Runs pipelines in a process of its own, loading the library once by its path (not
through `enzyme_ad.jax`, which imports jax): its LLVM/MLIR never shares a process with
ours (xDSL's, numba's llvmlite, IREE's bindings, libclang), and a crash in it fails one
kernel, not the caller. One request: a line `len(pipeline) len(text)`, then both; one
reply: a line `status len(out)`, then Enzyme's output (status 0) or its diagnostic (3)."""


class _Server:
    """`_SERVER`, started on first use and kept for the process's later pipelines: the
    library takes longer to load than to differentiate a kernel (a bench runs one
    pipeline per kernel). A server that dies is started again on the next request."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr: Any = None
        self.owner = 0
        self.lock = threading.Lock()

    def run(self, text: str, pipeline: str) -> tuple[int, str]:
        """(0, Enzyme's output) or (3, its diagnostic); a ValueError if the server died."""
        path = library()  # raises without the extra, even with a server still running
        with self.lock:
            process = self._started(path)
            data = [pipeline.encode(), text.encode()]
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(b"%d %d\n" % tuple(len(d) for d in data) + b"".join(data))
                process.stdin.flush()
                header = process.stdout.readline().split()
                status, size = int(header[0]), int(header[1])
                return status, process.stdout.read(size).decode()
            except (OSError, ValueError, IndexError):
                code = process.wait()
                self.process = None
                self.stderr.seek(0)
                said = self.stderr.read().decode(errors="replace").strip()
                ended = f"signal {-code}" if code < 0 else f"exit status {code}"
                last = said.splitlines()[-1] if said else "no message"
                raise ValueError(f"Enzyme-MLIR's process ended with {ended}: {last}") from None

    def _started(self, path: Path) -> subprocess.Popen[bytes]:
        if self.process is None or self.owner != os.getpid():  # not a parent's, if forked
            self.stderr = tempfile.TemporaryFile()
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", _SERVER, str(path)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            )  # fmt: skip
            self.owner = os.getpid()
        return self.process

    def stop(self) -> None:
        if self.process is not None and self.owner == os.getpid():
            assert self.process.stdin is not None
            self.process.stdin.close()  # the server's loop ends at end of input
            self.process.wait()
            self.stderr.close()
        self.process = None


_server = _Server()
atexit.register(_server.stop)


def run_pipeline(text: str, pipeline: str) -> str:
    """Enzyme-MLIR's `run_pass_pipeline` on `text` (in `_SERVER`). A failure is a
    ValueError carrying Enzyme's own diagnostic, which the library writes to stderr."""
    status, out = _server.run(text, pipeline)
    if status == 0:
        return out
    raise ValueError(out.strip() or "Enzyme-MLIR failed without a message")


_DIAGNOSTIC = re.compile(r'loc\("([^"]*)":(\d+):(\d+)\): error: ([^\n]*)')
_OP_NAME = re.compile(r'"([a-z_]+\.[a-z_.]+)"\(')


def enzyme_error(f: func.FuncOp, diagnostic: str) -> str:
    """One located line from Enzyme's diagnostic: its location and first line, with the
    name of the op it dumps (not the dump)."""
    found = _DIAGNOSTIC.search(diagnostic)
    if found is None:
        return op_error(f, f"Enzyme-MLIR cannot differentiate it: {' '.join(diagnostic.split())}")
    file, line, col, message = found.groups()
    message = message.strip()
    op = _OP_NAME.search(diagnostic, found.start(4))
    if op is not None:
        cut = message.find(" %")
        message = f"{message[:cut] if cut >= 0 else message} ('{op.group(1)}')"
    where = f"{file}:{line}:{col}" if file != "-" else location_of(f) or "<input>"
    return f"{where}: Enzyme-MLIR cannot differentiate @{f.sym_name.data}: {message}"


def _enzyme_input(module: ModuleOp, generic: bool = False) -> str:
    """`module` as Enzyme-MLIR reads it: our markers dropped, our locations kept (so the
    ops of Enzyme's output point at the user's file)."""
    clean = module.clone()
    for op in clean.walk():
        if isinstance(op, func.FuncOp):
            op.attributes.pop(AUTODIFF_ATTR, None)
            if op.arg_attrs is not None:
                op.arg_attrs = builtin.ArrayAttr(
                    [
                        builtin.DictionaryAttr(
                            {k: v for k, v in d.data.items() if not k.startswith("tapeflow.")}
                        )
                        for d in op.arg_attrs
                    ]
                )
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic, print_debuginfo=True).print_op(clean)
    return out.getvalue()


_ALIAS = re.compile(r"^(#loc\d*) = (loc\(.*\))$", re.M)
_ALIAS_USE = re.compile(r"loc\((#loc\d*)\)")
_IV_LOC = re.compile(r"(%[\w$.-]+) loc\([^()]*\) =")
_FILE_LOC = re.compile(r'^loc\("[^"]*":\d+:\d+\)$')
_FUSED_FIRST = re.compile(r"^loc\(fused(?:<[^>]*>)?\[(#loc\d*)")
_CAST = re.compile(r"^(\s*%\S+ = )memref\.cast (%\S+) : (.+?) to (.+?)((?: loc\(.*\))?)$", re.M)


def inline_locations(text: str) -> str:
    """Enzyme's output with its `#locN = loc(...)` aliases substituted (xDSL 0.74 reads
    `loc("file":line:col)` but not aliases); a fused location becomes its first part; a
    `memref.cast` is written in its generic form."""
    table = location_aliases(text)
    return _readable(_ALIAS_USE.sub(lambda m: table[m.group(1)], _ALIAS.sub("", text)))


def location_aliases(text: str) -> dict[str, str]:
    """Each `#locN` alias `text` defines or uses -> the location it stands for, as xDSL
    0.74 reads it: a file location, a fused location's first part, else `loc(unknown)`."""
    aliases = dict(_ALIAS.findall(text))

    def resolve(name: str, depth: int = 0) -> str:
        location = aliases.get(name, "")
        if _FILE_LOC.match(location):
            return location
        first = _FUSED_FIRST.match(location)
        if first and depth < 8:
            return resolve(first.group(1), depth + 1)
        return "loc(unknown)"

    return {name: resolve(name) for name in {*aliases, *_ALIAS_USE.findall(text)}}


def _readable(text: str) -> str:
    """Enzyme's output in the forms xDSL 0.74 reads."""
    # xDSL 0.74 has no custom form of memref.cast: its generic form.
    body = _CAST.sub(r'\1"memref.cast"(\2) : (\3) -> \4\5', text)
    # xDSL does not read a location on a loop's induction variable (`affine.for %i loc(..) =`).
    return _IV_LOC.sub(r"\1 =", body)


_FUNC_START = re.compile(r"^  func\.func (?:private )?@([\w$.-]+)\(")


def without_functions(text: str, names: set[str]) -> str:
    """Enzyme's output without the functions `names` it gives back unchanged (ours), each
    line of them left empty, so that the functions it adds keep their lines: xDSL need
    not read what is thrown away."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        start = _FUNC_START.match(line)
        if start is None or start.group(1) not in names:
            continue
        end = i  # a declaration; a body ends at the first line back at the module's indent
        if line.rstrip().endswith("{"):
            end = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("  }")), i)
        lines[i : end + 1] = [""] * (end + 1 - i)
    return "\n".join(lines)


_TYPE = re.compile(r"(?:memref|!enzyme\.Cache)<(?:[^<>()]|<(?:[^<>()]|<[^<>()]*>)*>)*>")
"""A memref or Enzyme cache type, up to three `<>` deep (no affine map: it has parentheses
and an arrow)."""


def shared_types(text: str) -> str:
    """`text` with each memref and cache type it names written once, as a type alias on
    its first line, and named by the alias where it occurs: xDSL builds a type each time it
    reads one, a third of its time on Enzyme's output. Every op keeps its line and
    column (the first line is the module's, or a location alias's)."""
    aliases: dict[str, str] = {}

    def alias(found: re.Match[str]) -> str:
        return aliases.setdefault(found.group(0), f"!tf_type{len(aliases)}")

    body = _TYPE.sub(alias, text)
    return " ".join(f"{name} = {t}" for t, name in aliases.items()) + " " + body


_FILE_LOC_PARTS = re.compile(r'^loc\("([^"\\]*)":(\d+):(\d+)\)$')


def read_output(ctx: Context, text: str, known: set[str]) -> ModuleOp:
    """Enzyme's output `text`, parsed as `inline_locations(text)` is (the same ops and
    locations) in about half the time: its location aliases given to the parser, built
    once each, rather than substituted; its types shared (`shared_types`); the functions
    `known` (ours, given back unchanged) not read (`without_functions`)."""
    locations: dict[str, Attribute] = {}
    for name, location in location_aliases(text).items():
        parts = _FILE_LOC_PARTS.match(location)
        if location == "loc(unknown)":
            locations[name] = UnknownLoc()
        elif parts is not None:
            line, col = IntAttr(int(parts.group(2))), IntAttr(int(parts.group(3)))
            locations[name] = FileLineColLoc(StringAttr(parts.group(1)), line, col)
        else:  # a file name with escapes
            locations[name] = Parser(ctx, location).parse_optional_location()
    body = shared_types(without_functions(_readable(_ALIAS.sub("", text)), known))
    return _OutputParser(ctx, body, "<enzyme-mlir>", locations).parse_module()


class _OutputParser(LocatingParser):
    """A `LocatingParser` that looks up a `loc(#locN)` (a third of the tokens of Enzyme's
    output) in `locations` instead of lexing and parsing it."""

    def __init__(self, ctx: Context, text: str, name: str, locations: dict[str, Attribute]):
        super().__init__(ctx, text, name)
        self.attribute_aliases.update(locations)
        self._text = text

    def parse_optional_location(self):  # type: ignore[override]
        token = self._current_token
        if token.text == "loc":
            used = _ALIAS_USE.match(self._text, token.span.start)
            if used is not None and used.group(1) in self.attribute_aliases:
                self._resume_from(used.end())
                return self.attribute_aliases[used.group(1)]
        return super().parse_optional_location()


def differentiate(module: ModuleOp, f: func.FuncOp, grad_name: str, ctx: Context):
    """The functions Enzyme-MLIR adds to `module` to make `@grad_name` from `f`, parsed
    with TapeFlow's dialects; an error located at `f` with Enzyme's own message."""
    pipeline = wrap_pipeline(f, grad_name)
    source = pre_enzyme.prepared(module, f.sym_name.data)  # what LLVM does before Enzyme
    try:
        try:
            text = run_pipeline(_enzyme_input(source), pipeline)
        except ValueError as e:
            if "Failed to parse module" not in str(e) and "to begin a region" not in str(e):
                raise
            # xDSL 0.74 prints some custom forms' locations where MLIR does not read
            # them (`scf.while ... -> (f64) loc(..) {`); their generic form it reads.
            text = run_pipeline(_enzyme_input(source, generic=True), pipeline)
    except ValueError as e:
        raise PassFailedException(enzyme_error(f, str(e))) from None
    known = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    try:
        out = read_output(ctx, text, known)
    except ParseError as e:
        raise PassFailedException(
            op_error(f, f"Enzyme-MLIR's output does not parse here: {e.msg}")
        ) from None
    added = [op for op in out.ops if isinstance(op, func.FuncOp) and op.sym_name.data not in known]
    for op in added:
        op.detach()
        op.sym_visibility = None  # Enzyme makes its functions private; ours are public
        mark_tape_buffers(op)
        expand_fill_zero(op)
    return added


def expand_fill_zero(f: func.FuncOp) -> None:
    """Each `enzyme.fill_zero` as the loop nest of stores it stands for, so the hardware
    model charges every element it writes."""
    for fill in [op for op in f.walk() if isinstance(op, enzyme.FillZeroOp)]:
        buffer = fill.memref
        mtype = buffer.type
        assert isinstance(mtype, MemRefType)
        builder = Builder(InsertPoint.before(fill))
        zero = builder.insert(arith.ConstantOp(builtin.FloatAttr(0.0, mtype.element_type)
                              if is_float_type(mtype.element_type)
                              else builtin.IntegerAttr(0, mtype.element_type)))  # fmt: skip
        lower = builder.insert(arith.ConstantOp.from_int_and_width(0, builtin.IndexType()))
        step = builder.insert(arith.ConstantOp.from_int_and_width(1, builtin.IndexType()))
        indices: list[SSAValue] = []
        for k, n in enumerate(mtype.get_shape()):
            if n >= 0:
                upper = builder.insert(arith.ConstantOp.from_int_and_width(n, builtin.IndexType()))
            else:
                dim = builder.insert(arith.ConstantOp.from_int_and_width(k, builtin.IndexType()))
                upper = builder.insert(memref.DimOp(buffer, dim))
            body = Block(arg_types=[builtin.IndexType()])
            builder.insert(scf.ForOp(lower, upper, step, [], body))
            indices.append(body.args[0])
            body.add_op(yield_op := scf.YieldOp())
            builder = Builder(InsertPoint.before(yield_op))
        builder.insert(memref.StoreOp.get(zero, buffer, indices))
        fill.detach()
        fill.erase()


def mark_tape_buffers(f: func.FuncOp) -> None:
    """Marks `tapeflow.tape` the buffers Enzyme allocated for its tape, so the hardware
    model counts them as tape bytes beside its `enzyme.init` caches: those `enzyme.store`
    writes, those kept in a buffer of buffers (and that buffer), those pushed to a cache."""
    for op in f.walk():
        if not isinstance(op, memref.AllocOp):
            continue
        buffer = op.memref
        table = isinstance(buffer.type.element_type, MemRefType)
        kept = any(
            isinstance(u.operation, enzyme.StoreOp | enzyme.LoadOp | enzyme.PushOp)
            or (isinstance(u.operation, memref.StoreOp) and u.operation.value is buffer)
            for u in buffer.uses
        )
        if table or kept:
            op.attributes[TAPE_ATTR] = builtin.UnitAttr()


@dataclass(frozen=True)
class EnzymeAutodiffPass(ModulePass):
    """Adds `@f_grad` beside each `@f` marked `tapeflow.autodiff` (or named by
    `functions=a,b`), made by real Enzyme-MLIR instead of `tapeflow-autodiff`.

    Same calling convention as `tapeflow-autodiff`'s; the tape is Enzyme's: buffers it
    sized itself, and `enzyme.init/push/pop` caches where it could not
    (`enzyme-import-tape` makes them `tape` caches for TapeFlow's passes).
    """

    name = "enzyme-autodiff"

    functions: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        named = {n for n in self.functions.split(",") if n}
        targets = [
            f
            for f in op.ops
            if isinstance(f, func.FuncOp)
            and (AUTODIFF_ATTR in f.attributes or f.sym_name.data in named)
        ]
        missing = named - {f.sym_name.data for f in targets}
        if missing:
            raise PassFailedException(f"enzyme-autodiff: no function named {sorted(missing)}")
        for f in targets:
            grad_name = f"{f.sym_name.data}_grad"
            if any(isinstance(g, func.FuncOp) and g.sym_name.data == grad_name for g in op.ops):
                raise PassFailedException(op_error(f, f"@{grad_name} already exists"))
            after = f
            for added in differentiate(op, f, grad_name, ctx):
                op.body.block.insert_op_after(added, after)
                after = added
