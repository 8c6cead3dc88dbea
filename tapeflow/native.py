"""Runs a function natively with upstream MLIR: `mlir-opt-22` to LLVM, then `mlir-runner-22`.

`run_function_native(module, entry, args)` is `tapeflow.runner.run_function` run
natively: the same arguments (NumPy arrays for memrefs, Python scalars), the same
`RunResult` back, so `tapeflow-exec` prints exactly what `tapeflow-run` prints:

1. the module is cloned and lowered to upstream dialects (`tapeflow-lower-to-std`);
2. a wrapper function `@__tapeflow_main` is appended to it. Each memref argument becomes a
   `memref.global` whose `dense<"0x...">` initialiser is the argument's raw bytes, so the
   native program starts from bit-identical inputs; each scalar argument is a constant
   (floats as their bit pattern). The wrapper calls the entry, then prints every result
   and every memref argument one integer per line with the C runner library's `printI64`:
   floats bit-cast to integers, memrefs as their sizes then their elements in row-major
   order. Nothing is lost to printF64's six digits;
3. `mlir-opt-22` runs `VERIFIED_PIPELINE` (`MLIR_OPT_PIPELINE` with runtime checks, located
   by the ops' locations), `mlir-runner-22` runs `@__tapeflow_main` with the two runner
   libraries, and the integers are turned back into Python values; memref
   arguments are updated in place, as the interpreter would have done.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Attribute
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import InterpretationError

from tapeflow.diagnostics import LocatedPrinter, ToolError
from tapeflow.runner import RunResult

MLIR_VERSION = "22"
APT_PACKAGES = ("mlir-22-tools", "libmlir-22")
INSTALL_HINT = (
    "install upstream MLIR 22 with `apt-get install -y mlir-22-tools libmlir-22` "
    "(mlir-opt-22, mlir-runner-22 and the runner libraries under /usr/lib/llvm-22/lib)"
)
RUNNER_LIBRARIES = ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so")
LIBRARY_DIRS = ("/usr/lib/llvm-22/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu")

MLIR_OPT_PIPELINE = (
    "--expand-strided-metadata",  # memref.subview (Enzyme-MLIR's cache slices), to affine
    "--lower-affine",
    "--convert-scf-to-cf",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-arith-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""The upstream pipeline from standard dialects to the LLVM dialect."""

RUNTIME_VERIFICATION = "--generate-runtime-verification"
"""Upstream's checks of what the verifier cannot see (memref bounds, casts): a failing
check aborts with the op's location."""

VERIFIED_PIPELINE = (
    RUNTIME_VERIFICATION,
    "--expand-strided-metadata",  # after the checks, which see the memref.subviews
    "--lower-affine",
    "--convert-scf-to-cf",
    "--finalize-memref-to-llvm",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-arith-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""`MLIR_OPT_PIPELINE` with the runtime checks (tapeflow-exec's default). The memref ops
are lowered before arith's: a check's `memref.dim %m, %c0` then still sees its constant
index and reads the size from the descriptor; after arith's lowering it takes a stack
slot per call, and a check in a loop of a million iterations overflows the stack."""

WRAPPER = "__tapeflow_main"


@dataclass(frozen=True)
class NativeTools:
    opt: str
    runner: str
    libraries: tuple[str, ...]


def find_tools() -> NativeTools:
    """Locates mlir-opt-22, mlir-runner-22 and the runner libraries, or says how to install."""
    opt = shutil.which(f"mlir-opt-{MLIR_VERSION}")
    runner = shutil.which(f"mlir-runner-{MLIR_VERSION}")
    missing = [
        name
        for name, path in (
            (f"mlir-opt-{MLIR_VERSION}", opt),
            (f"mlir-runner-{MLIR_VERSION}", runner),
        )
        if path is None
    ]
    libraries: list[str] = []
    for lib in RUNNER_LIBRARIES:
        found = _find_library(lib)
        if found is None:
            missing.append(lib)
        else:
            libraries.append(found)
    if missing or opt is None or runner is None:
        raise ToolError(f"native execution needs {', '.join(missing)}: {INSTALL_HINT}")
    return NativeTools(opt, runner, tuple(libraries))


def _find_library(name: str) -> str | None:
    dirs = [d for d in os.environ.get("TAPEFLOW_MLIR_LIB_DIR", "").split(":") if d]
    for directory in (*dirs, *LIBRARY_DIRS):
        for candidate in (f"{name}.{MLIR_VERSION}.1", name):
            path = os.path.join(directory, candidate)
            if os.path.exists(path):
                return path
        if os.path.isdir(directory):
            versioned = sorted(
                f for f in os.listdir(directory) if f.startswith(f"{name}.{MLIR_VERSION}")
            )
            if versioned:
                return os.path.join(directory, versioned[0])
    return None


def tools_available() -> bool:
    try:
        find_tools()
    except ToolError:
        return False
    return True


# --------------------------------------------------------------------------------------
# lowering and printing


def lower_module(module: ModuleOp, ctx: Context | None = None) -> ModuleOp:
    """A copy of `module` with only upstream dialects left (`tapeflow-lower-to-std`)."""
    from tapeflow.registry import make_context
    from tapeflow.transforms.lower_to_std import LowerToStdPass

    lowered = module.clone()
    LowerToStdPass().apply(ctx or make_context(), lowered)
    _canonical_nans(lowered)
    _call_libm(lowered)
    lowered.verify()
    return lowered


LIBM_CALLS = {"math.expm1": "expm1", "math.log1p": "log1p"}
"""Math ops that upstream's `--convert-math-to-llvm` expands inexactly (`exp(x) - 1`,
`log(1 + x)`: relative errors near 1e-7 for |x| ~ 1e-10), so the native program calls
libm for them, as the interpreter (Python's `math`) does."""


def _call_libm(module: ModuleOp) -> None:
    declared = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    for op in list(module.walk()):
        base = LIBM_CALLS.get(op.name)
        if base is None or len(op.operands) != 1:
            continue
        typ = op.operands[0].type
        if not isinstance(typ, Float32Type | Float64Type):
            continue
        symbol = base + ("f" if isinstance(typ, Float32Type) else "")
        if symbol not in declared:
            decl = func.FuncOp.external(symbol, [typ], [typ])
            Rewriter.insert_op(decl, InsertPoint.at_start(module.body.block))
            declared.add(symbol)
        call = func.CallOp(symbol, [op.operands[0]], [typ])
        Rewriter.replace_op(op, call)


_NAN_BITS = {64: 0xFFF8000000000000, 32: 0xFFC00000}
"""`tapeflow.semantics.NAN` in f64 and f32 (as a signed integer of that width, below)."""


def _canonical_nans(module: ModuleOp) -> None:
    """After every math op on f64 or f32, a NaN it made of non-NaN operands becomes the
    table's `NAN` (`select`): libm's is not (glibc's asin(2) is +nan). Hardware ops
    (arith's +, -, *, /) give it already on x86-64."""
    for op in list(module.walk()):
        if not op.name.startswith("math.") or len(op.results) != 1:
            continue
        result = op.results[0]
        if not isinstance(result.type, Float32Type | Float64Type):
            continue
        width = result.type.bitwidth
        bits = _NAN_BITS[width] - (1 << width)
        made = arith.CmpfOp(result, result, "uno")
        new: list[Any] = [made]
        for operand in op.operands:
            if operand.type == result.type:
                ordered = arith.CmpfOp(operand, operand, "ord")
                made = arith.AndIOp(made, ordered)
                new += [ordered, made]
        constant = arith.ConstantOp(IntegerAttr(bits, IntegerType(width)))
        nan = arith.BitcastOp(constant, result.type)
        select = arith.SelectOp(made, nan, result)
        new += [constant, nan, select]
        Rewriter.insert_op(new, InsertPoint.after(op))
        result.replace_uses_with_if(select.result, lambda use: use.operation not in new)


def _type_text(typ: Attribute) -> str:
    return str(typ)


def _function(module: ModuleOp, entry: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == entry:
            if op.is_declaration:
                raise ToolError(f"function @{entry} is only declared, it has no body")
            return op
    raise ToolError(f"no function @{entry} in the module")


def _scalar_bits(typ: Attribute) -> int:
    if isinstance(typ, IndexType):
        return 64
    if isinstance(typ, IntegerType) and typ.bitwidth <= 64:
        return typ.bitwidth
    if isinstance(typ, Float16Type | Float32Type | Float64Type):
        return typ.bitwidth
    raise ToolError(f"native execution does not support values of type {typ}")


_PACK = {16: "e", 32: "f", 64: "d"}
_IPACK = {8: "b", 16: "h", 32: "i", 64: "q"}


def _float_to_bits(value: float, width: int) -> int:
    return struct.unpack(f"<{_IPACK[width].upper()}", struct.pack(f"<{_PACK[width]}", value))[0]


def _bits_to_float(bits: int, width: int) -> float:
    unsigned = bits & ((1 << width) - 1)
    return struct.unpack(f"<{_PACK[width]}", struct.pack(f"<{_IPACK[width].upper()}", unsigned))[0]


def _dense_initializer(array: np.ndarray, element: Attribute) -> str:
    """`dense<"0x...">` holding the raw little-endian bytes of `array` as `element`s."""
    if array.size == 0:
        return "uninitialized"
    if isinstance(element, IntegerType) and element.bitwidth == 1:
        return f"dense<{_nested_bools(np.asarray(array, dtype=np.bool_))}>"
    raw = np.ascontiguousarray(array, dtype=_storage_dtype(element)).tobytes()
    return f'dense<"0x{raw.hex().upper()}">'


def _nested_bools(array: np.ndarray) -> str:
    """`[[true, false], ...]`, nested like the shape (MLIR checks the nesting)."""
    if array.ndim == 0:
        return "true" if array.item() else "false"
    return "[" + ", ".join(_nested_bools(sub) for sub in array) + "]"


def _storage_dtype(element: Attribute) -> np.dtype[Any]:
    if isinstance(element, Float64Type):
        return np.dtype("<f8")
    if isinstance(element, Float32Type):
        return np.dtype("<f4")
    if isinstance(element, Float16Type):
        return np.dtype("<f2")
    if isinstance(element, IndexType):
        return np.dtype("<i8")
    if isinstance(element, IntegerType) and element.bitwidth in (1, 8, 16, 32, 64):
        if element.bitwidth == 1:
            return np.dtype(np.bool_)
        return np.dtype(f"<i{element.bitwidth // 8}")
    raise ToolError(f"native execution does not support memrefs of {element}")


class _Wrapper:
    """Builds the text of the globals and of `@__tapeflow_main`."""

    def __init__(self) -> None:
        self.globals: list[str] = []
        self.body: list[str] = []
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"%w{self.counter}"

    def line(self, text: str) -> None:
        self.body.append("    " + text)

    def index(self, value: int) -> str:
        name = self.fresh()
        self.line(f"{name} = arith.constant {value} : index")
        return name

    def argument(self, position: int, typ: Attribute, value: Any) -> str:
        if isinstance(typ, MemRefType):
            if not isinstance(value, np.ndarray):
                raise ToolError(f"argument {position} of type {typ} needs an array")
            element = typ.element_type
            shape = list(value.shape)
            static = MemRefType(element, shape)
            symbol = f"__tapeflow_arg{position}"
            init = _dense_initializer(value, element)
            self.globals.append(
                f'  memref.global "private" @{symbol} : {_type_text(static)} = {init}'
            )
            ref = self.fresh()
            self.line(f"{ref} = memref.get_global @{symbol} : {_type_text(static)}")
            if static != typ:
                cast = self.fresh()
                self.line(f"{cast} = memref.cast {ref} : {_type_text(static)} to {_type_text(typ)}")
                ref = cast
            return ref
        name = self.fresh()
        bits = _scalar_bits(typ)
        if isinstance(typ, AnyFloat):
            raw = _float_to_bits(float(value), bits)
            self.line(f"{name} = arith.constant 0x{raw:0{bits // 4}X} : {typ}")
        elif bits == 1:
            self.line(f"{name} = arith.constant {'true' if value else 'false'}")
        else:
            self.line(f"{name} = arith.constant {int(value)} : {_type_text(typ)}")
        return name

    def print_scalar(self, value: str, typ: Attribute) -> None:
        bits = _scalar_bits(typ)
        if isinstance(typ, IndexType):
            as_int = self.fresh()
            self.line(f"{as_int} = arith.index_cast {value} : index to i64")
        else:
            if isinstance(typ, AnyFloat):
                cast = self.fresh()
                self.line(f"{cast} = arith.bitcast {value} : {typ} to i{bits}")
                value = cast
            if bits == 64:
                as_int = value
            else:
                as_int = self.fresh()
                ext = "arith.extui" if bits == 1 or isinstance(typ, AnyFloat) else "arith.extsi"
                self.line(f"{as_int} = {ext} {value} : i{bits} to i64")
        self.line(f"func.call @printI64({as_int}) : (i64) -> ()")
        self.line("func.call @printNewline() : () -> ()")

    def print_memref(self, ref: str, typ: MemRefType[Attribute]) -> None:
        sizes: list[str] = []
        for dim in range(typ.get_num_dims()):
            d = self.index(dim)
            size = self.fresh()
            self.line(f"{size} = memref.dim {ref}, {d} : {_type_text(typ)}")
            self.print_scalar(size, IndexType())
            sizes.append(size)
        zero, one = self.index(0), self.index(1)
        ivs: list[str] = []
        for size in sizes:
            iv = self.fresh()
            self.line(f"scf.for {iv} = {zero} to {size} step {one} {{")
            ivs.append(iv)
        element = self.fresh()
        self.line(f"{element} = memref.load {ref}[{', '.join(ivs)}] : {_type_text(typ)}")
        self.print_scalar(element, typ.element_type)
        for _ in sizes:
            self.line("}")

    def text(self, declare: Sequence[str]) -> str:
        decls = [f"  func.func private @{name}({sig})" for name, sig in declare]
        lines = [*self.globals, *decls, f"  func.func @{WRAPPER}() {{", *self.body]
        lines += ["    func.return", "  }"]
        return "\n".join(lines) + "\n"


_RUNTIME = (("printI64", "i64"), ("printNewline", ""))


def native_program(
    module: ModuleOp,
    entry: str,
    args: Sequence[Any],
    ctx: Context | None = None,
    located: bool = True,
) -> tuple[str, list[tuple[str, Attribute, int | None]]]:
    """The upstream MLIR text that runs `entry` on `args` and prints the values back;
    `located`: with the module's ops' locations (`_print_module`).

    Returns the text and the list of printed values (`("result", type, i)` or
    `("arg", type, i)`), in printing order.
    """
    lowered = lower_module(module, ctx)
    function = _function(lowered, entry)
    inputs = function.function_type.inputs.data
    outputs = function.function_type.outputs.data
    if len(inputs) != len(args):
        raise ToolError(f"@{entry} takes {len(inputs)} argument(s), got {len(args)}")
    wrapper = _Wrapper()
    operands = [wrapper.argument(i, t, v) for i, (t, v) in enumerate(zip(inputs, args))]
    results = [wrapper.fresh() for _ in outputs]
    call = f"func.call @{entry}({', '.join(operands)}) : "
    call += f"({', '.join(map(_type_text, inputs))}) -> ({', '.join(map(_type_text, outputs))})"
    if results:
        call = ", ".join(results) + " = " + call
    wrapper.line(call)
    printed: list[tuple[str, Attribute, int | None]] = []
    for i, (name, typ) in enumerate(zip(results, outputs)):
        _emit_print(wrapper, name, typ)
        printed.append(("result", typ, i))
    for i, (name, typ) in enumerate(zip(operands, inputs)):
        if isinstance(typ, MemRefType):
            _emit_print(wrapper, name, typ)
            printed.append(("arg", typ, i))
    existing = {op.sym_name.data for op in lowered.ops if isinstance(op, func.FuncOp)}
    if WRAPPER in existing:
        raise ToolError(f"the module already defines @{WRAPPER}")
    declare = [(n, s) for n, s in _RUNTIME if n not in existing]
    text = _print_module(lowered, located)
    closing = text.rstrip().rfind("}")  # the end of the module's body
    program = text[:closing] + wrapper.text(declare) + text[closing:]
    return program, printed


def _emit_print(wrapper: _Wrapper, name: str, typ: Attribute) -> None:
    if isinstance(typ, MemRefType):
        wrapper.print_memref(name, typ)
    else:
        wrapper.print_scalar(name, typ)


def _print_module(module: ModuleOp, located: bool = False) -> str:
    """`located`: with the ops' locations (`loc(...)`, as upstream reads them), so that
    the runtime verification names the source line of an op that fails."""
    import io

    out = io.StringIO()
    LocatedPrinter(stream=out, print_debuginfo=located).print_op(module)
    return out.getvalue() + "\n"


# --------------------------------------------------------------------------------------
# running


def compile_to_llvm(program: str, tools: NativeTools | None = None, verify: bool = False) -> str:
    """Runs upstream `mlir-opt-22` with `MLIR_OPT_PIPELINE` on `program`
    (`VERIFIED_PIPELINE` when `verify`)."""
    tools = tools or find_tools()
    passes = VERIFIED_PIPELINE if verify else MLIR_OPT_PIPELINE
    done = subprocess.run([tools.opt, *passes], input=program, capture_output=True, text=True)
    if done.returncode != 0:
        raise InterpretationError(f"mlir-opt-{MLIR_VERSION} failed:\n{done.stderr.strip()}")
    return done.stdout


def run_llvm(llvm: str, tools: NativeTools | None = None, flags: Sequence[str] = ()) -> str:
    """Runs `@__tapeflow_main` of an LLVM-dialect module with `mlir-runner-22` (`flags`:
    more of its options, e.g. `--O3`)."""
    tools = tools or find_tools()
    command = [
        tools.runner,
        "-e",
        WRAPPER,
        "-entry-point-result=void",
        f"-shared-libs={','.join(tools.libraries)}",
        *flags,
    ]
    done = subprocess.run(command, input=llvm, capture_output=True, text=True)
    if done.returncode != 0:
        raise InterpretationError(_failure_message(command, llvm, done))
    return done.stdout


def _failure_message(command: list[str], llvm: str, done: subprocess.CompletedProcess[str]) -> str:
    """What went wrong in a failed native run, without LLVM's crash dump.

    A failed `cf.assert` (e.g. `tape.pop` on an empty cache) `puts` its message and
    aborts, so the message is lost in stdout's buffer; the run is deterministic, so it is
    repeated with stdout unbuffered (`stdbuf -o0`) to recover the message."""
    messages = _non_integer_lines(done.stdout)
    stdbuf = shutil.which("stdbuf")
    if not messages and stdbuf is not None:
        again = subprocess.run(
            [stdbuf, "-o0", *command], input=llvm, capture_output=True, text=True
        )
        messages = _non_integer_lines(again.stdout)
    stderr = [
        line
        for line in done.stderr.splitlines()
        if line.strip()
        and not line.startswith(("PLEASE submit", "Stack dump:", " #", "#", "0.\t"))
        and not line.lstrip().startswith("#")
    ]
    status = (
        f"killed by signal {-done.returncode}"
        if done.returncode < 0
        else f"exit status {done.returncode}"
    )
    located = _verification_failure(messages)
    if located:
        return located
    detail = "\n".join([*messages, *stderr]) or "no message"
    return f"native run failed ({status}): {detail}"


_LOCATION = re.compile(r'Location: loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def _verification_failure(messages: Sequence[str]) -> str | None:
    """`file:line:col: 'op' <what failed> (runtime verification)` from the report of
    upstream's runtime verification (`ERROR: Runtime op verification failed`, the op,
    `^ what`, `Location: loc(...)`), or None when there is none."""
    if not any("Runtime op verification failed" in m for m in messages):
        return None
    text = "\n".join(messages)
    where = _LOCATION.search(text)
    what = next((m[1:].strip() for m in messages if m.startswith("^")), "check failed")
    ops = (re.match(r"(?:%\S+ = )?([a-z_]+\.[a-z_.]+)", m) for m in messages)
    op = next((m.group(1) for m in ops if m), None)  # the line that prints the op
    name = f"'{op}' " if op else ""
    prefix = f"{where['file']}:{where['line']}:{where['col']}: " if where else ""
    return f"{prefix}{name}{what} (runtime verification)"


def _non_integer_lines(output: str) -> list[str]:
    lines: list[str] = []
    for line in output.splitlines():
        text = line.strip()
        if text and not text.lstrip("-").isdigit():
            lines.append(text)
    return lines


def run_function_native(
    module: ModuleOp,
    name: str,
    args: Sequence[Any],
    *,
    ctx: Context | None = None,
    tools: NativeTools | None = None,
    verify: bool = True,
) -> RunResult:
    """`tapeflow.runner.run_function`, run natively: the same arguments (NumPy arrays for
    memrefs, Python scalars), the same `RunResult`, the given arrays updated in place.
    `verify`: with upstream's runtime checks (`VERIFIED_PIPELINE`)."""
    from tapeflow.runner import find_function

    tools = tools or find_tools()
    func_op = find_function(module, name)
    arg_types = list(func_op.function_type.inputs.data)
    result_types = list(func_op.function_type.outputs.data)
    if len(args) != len(arg_types):
        raise ToolError(f"@{name} takes {len(arg_types)} argument(s), got {len(args)}")
    values = [argument_value(p, v, t) for p, (v, t) in enumerate(zip(args, arg_types))]
    program, printed = native_program(module, name, values, ctx)
    llvm = compile_to_llvm(program, tools, verify)
    numbers = _Numbers(_parse_integers(run_llvm(llvm, tools)))
    results: list[Any] = []
    final_args: list[Any] = list(args)
    for kind, typ, position in printed:
        assert position is not None
        value = (
            _take_memref(numbers, typ)
            if isinstance(typ, MemRefType)
            else (_decode_scalar(int(numbers.take(1)[0]), typ))
        )
        if kind == "result":
            results.append(value)
        else:
            final_args[position] = value
            given = args[position]
            if isinstance(given, np.ndarray) and given.flags.writeable:
                np.copyto(given, value.astype(given.dtype, copy=False), casting="unsafe")
    if numbers.left:
        raise InterpretationError(f"native run printed {numbers.left} unexpected value(s)")
    memref_positions = [p for p, t in enumerate(arg_types) if isinstance(t, MemRefType)]
    return RunResult(name, results, result_types, final_args, arg_types, memref_positions)


def argument_value(position: int, value: Any, typ: Attribute) -> Any:
    from tapeflow.runner import checked_array, scalar_value, to_numpy

    if isinstance(typ, MemRefType):
        if isinstance(value, ShapedArray):
            return to_numpy(value, typ.get_element_type())
        return checked_array(position, value, typ, 64)
    return scalar_value(value, typ, 64)


def _parse_integers(output: str) -> np.ndarray:
    """The integers the wrapper printed, one per line."""
    words = output.split()
    try:
        return np.array(words, dtype=np.int64)
    except (ValueError, OverflowError):
        bad = next(w for w in words if not w.lstrip("-").isdigit())
        raise InterpretationError(f"unexpected output from the native run: {bad!r}") from None


class _Numbers:
    """A cursor over the printed integers."""

    def __init__(self, values: np.ndarray):
        self.values = values
        self.position = 0

    @property
    def left(self) -> int:
        return len(self.values) - self.position

    def take(self, count: int) -> np.ndarray:
        if count > self.left:
            raise InterpretationError("native run printed fewer values than expected")
        chunk = self.values[self.position : self.position + count]
        self.position += count
        return chunk


def _decode_scalar(raw: int, typ: Attribute) -> Any:
    bits = _scalar_bits(typ)
    if isinstance(typ, AnyFloat):
        return _bits_to_float(raw, bits)
    if bits == 1:
        return bool(raw & 1)
    return raw


def _take_memref(numbers: _Numbers, typ: MemRefType[Attribute]) -> np.ndarray:
    shape = [int(v) for v in numbers.take(typ.get_num_dims())]
    raw = numbers.take(math.prod(shape))
    element = typ.element_type
    storage = _storage_dtype(element)
    if isinstance(element, AnyFloat):
        unsigned = np.dtype(f"<u{storage.itemsize}")
        values = raw.astype(unsigned).view(storage)
    elif storage == np.bool_:
        values = (raw & 1).astype(np.bool_)
    else:
        values = raw.astype(storage)
    return values.reshape(shape)


__all__ = [
    "APT_PACKAGES",
    "DYNAMIC_INDEX",
    "INSTALL_HINT",
    "MLIR_OPT_PIPELINE",
    "VERIFIED_PIPELINE",
    "NativeTools",
    "find_tools",
    "native_program",
    "run_function_native",
    "tools_available",
]


# --------------------------------------------------------------------------------------
# timing


def timing_program(
    module: ModuleOp, entry: str, args: Sequence[Any], calls: int, ctx: Context | None = None
) -> str:
    """Upstream MLIR text that calls `entry` `calls` times and prints, for each call, the
    CPU time it took in microseconds (libc's `clock()`, CLOCKS_PER_SEC = 10^6 on POSIX),
    then the final contents of the memref arguments (read, so no call is optimised away).

    Every call starts from the same inputs: each memref argument is copied from its
    pristine global into a working buffer before the clock starts (a gradient writes its
    shadows and may write its primal arrays), so no call sees another's results."""
    lowered = lower_module(module, ctx)
    function = _function(lowered, entry)
    inputs = function.function_type.inputs.data
    if len(inputs) != len(args):
        raise ToolError(f"@{entry} takes {len(inputs)} argument(s), got {len(args)}")
    wrapper = _Wrapper()
    copies: list[tuple[str, str, MemRefType[Attribute]]] = []  # pristine, working, type
    operands: list[str] = []
    for i, (typ, value) in enumerate(zip(inputs, args)):
        if not isinstance(typ, MemRefType):
            operands.append(wrapper.argument(i, typ, value))
            continue
        static_type = MemRefType(typ.element_type, list(value.shape))
        pristine = wrapper.argument(i, static_type, value)
        static = _type_text(static_type)
        working = wrapper.fresh()
        wrapper.line(f"{working} = memref.alloc() : {static}")
        copies.append((pristine, working, static_type))
        ref = working
        if _type_text(typ) != static:
            ref = wrapper.fresh()
            wrapper.line(f"{ref} = memref.cast {working} : {static} to {_type_text(typ)}")
        operands.append(ref)
    zero, one, count = wrapper.index(0), wrapper.index(1), wrapper.index(calls)
    wrapper.line(f"scf.for %__call = {zero} to {count} step {one} {{")
    for pristine, working, static_type in copies:
        static = _type_text(static_type)
        wrapper.line(f"memref.copy {pristine}, {working} : {static} to {static}")
    start, end, took = wrapper.fresh(), wrapper.fresh(), wrapper.fresh()
    wrapper.line(f"{start} = func.call @clock() : () -> i64")
    outputs = function.function_type.outputs.data
    call = f"func.call @{entry}({', '.join(operands)}) : "
    call += f"({', '.join(map(_type_text, inputs))}) -> ({', '.join(map(_type_text, outputs))})"
    if outputs:
        call = ", ".join(wrapper.fresh() for _ in outputs) + " = " + call
    wrapper.line(call)
    wrapper.line(f"{end} = func.call @clock() : () -> i64")
    wrapper.line(f"{took} = arith.subi {end}, {start} : i64")
    wrapper.print_scalar(took, IntegerType(64))
    wrapper.line("}")
    # The buffers are read after the loop, so the optimiser cannot drop the calls' work.
    for _pristine, working, static_type in copies:
        wrapper.print_memref(working, static_type)
    existing = {op.sym_name.data for op in lowered.ops if isinstance(op, func.FuncOp)}
    if WRAPPER in existing or "clock" in existing:
        raise ToolError(f"the module already defines @{WRAPPER} or @clock")
    declare = [(n, sig) for n, sig in _RUNTIME if n not in existing]
    text = _print_module(lowered)
    closing = text.rstrip().rfind("}")
    wrapper.globals.append("  func.func private @clock() -> i64")
    return text[:closing] + wrapper.text(declare) + "}\n"


def time_function_native(
    module: ModuleOp, name: str, args: Sequence[Any], calls: int = 1, **options: Any
) -> tuple[list[float], list[np.ndarray]]:
    """CPU seconds of each of `calls` native calls of `name` on `args` (one process:
    compiled once, every call from the same inputs; see `timing_program`), and the
    memref arguments after the last call (`options`: `compile_timing`'s)."""
    return compile_timing(module, name, args, calls, **options)()


def compile_timing(
    module: ModuleOp,
    name: str,
    args: Sequence[Any],
    calls: int = 1,
    *,
    tools: NativeTools | None = None,
    flags: Sequence[str] = ("--O3",),
) -> Callable[[], tuple[list[float], list[np.ndarray]]]:
    """`time_function_native` in two steps: the program made and lowered to LLVM once
    (here), then run as often as the returned function is called (interleaved timings
    of two programs pay the compilation once each)."""
    from tapeflow.runner import find_function

    tools = tools or find_tools()
    arg_types = list(find_function(module, name).function_type.inputs.data)
    values = [argument_value(p, v, t) for p, (v, t) in enumerate(zip(args, arg_types))]
    llvm = compile_to_llvm(timing_program(module, name, values, calls), tools)

    def run() -> tuple[list[float], list[np.ndarray]]:
        numbers = _Numbers(_parse_integers(run_llvm(llvm, tools, flags)))
        seconds = [int(n) / 1e6 for n in numbers.take(calls)]
        final = [
            _take_memref(numbers, MemRefType(t.element_type, list(np.shape(v))))
            for t, v in zip(arg_types, values)
            if isinstance(t, MemRefType)
        ]
        if numbers.left:
            raise InterpretationError(f"native timing printed {numbers.left} unexpected value(s)")
        return seconds, final

    return run
