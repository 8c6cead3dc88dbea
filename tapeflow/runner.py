"""Run one function of a module in the interpreter, with NumPy values in and out.

This is the library behind `tapeflow-run`; the AD tests, the hardware model and the
benchmark driver call it directly:

    module = load_module(text, "k.mlir")
    args = make_arguments(find_function(module, "f"), seed=0)   # numpy arrays / scalars
    result = run_function(module, "f", args)
    result.results      # returned values: float / int / bool / numpy arrays
    result.arguments    # every argument after the run (memrefs are mutated in place)

Values. A memref argument is a NumPy array of the memref's shape and element dtype
(f64 -> float64, f32 -> float32, f16 -> float16, iN -> intN (i1 -> bool), index ->
int64); a float scalar is a Python float (rounded to f32/f16 for those types), an
integer or index scalar a Python int. `run_function` copies the final contents of each
memref back into the NumPy array it was given, so callers see the in-place updates
(e.g. the gradients `@f_grad` accumulates into its shadow arguments).

The fill rule (`make_arguments`, documented in `tapeflow-run --help` too). A memref
argument at position p (0-based, in the function's signature) that is not given
explicitly is filled as follows:
- float element types: element k (row-major) is the k-th draw of
  `numpy.random.default_rng([seed, p]).uniform(-1.0, 1.0, size)`, drawn in float64 and
  rounded to the element type. Each argument has its own generator, so giving one
  argument explicitly does not change the others;
- integer, index and i1 element types: zeros (an index that is in bounds for any
  non-empty dimension); give real integer data with `inputs`;
- an argument listed in `zero`: zeros.
For a gradient `@F_grad` of `@F` in the same module, `gradient_layout` gives the
positions to fill the primal arguments as `@F`'s (same data as a run of `@F`) and the
shadows to zero; `tapeflow-run` applies it by default.
A memref with a dynamic dimension (`memref<?xf64>`) has no default: give it in `inputs`
(a zero-filled shadow takes its primal's shape: `shadow_shapes`).
Scalar arguments (float, integer, index) come from `scalars`, in signature order.

Errors are xDSL's (`ParseError`, `VerifyException`, `InterpretationError`) or
`tapeflow.diagnostics.ToolError` for bad arguments; a failure during the run is always
an `InterpretationError` whose message starts with the failing op's `file:line:col`.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.interpreter import Interpreter
from xdsl.interpreters.builtin import xtype_for_el_type
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import RawPtr, TypedPtr
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from tapeflow.convention import is_float_type, shadowed, source_name
from tapeflow.diagnostics import ToolError, op_error, parse_module, verify_module
from tapeflow.interpreters import runtime_error

__all__ = [
    "RunResult",
    "call_arguments",
    "find_function",
    "format_json",
    "format_text",
    "from_numpy",
    "gradient_layout",
    "load_module",
    "make_arguments",
    "parse_scalar",
    "run_function",
    "run_result",
    "shadow_shapes",
    "to_numpy",
]

Value = Any  # np.ndarray | float | int | bool, or an opaque interpreter value


@dataclass
class RunResult:
    """What one call returned, and the state of its arguments afterwards."""

    function: str
    results: list[Value]
    """Returned values: float/int/bool for scalars, np.ndarray for memrefs."""
    result_types: list[Attribute]
    arguments: list[Value]
    """Every argument after the run: np.ndarray for memrefs (holding the final
    contents), the scalar as passed otherwise."""
    argument_types: list[Attribute]
    memref_positions: list[int] = field(default_factory=list[int])
    """Positions of the memref arguments."""


# ---------------------------------------------------------------------------------------
# Loading


def load_module(text: str, name: str = "<stdin>", ctx: Context | None = None) -> ModuleOp:
    """Parses (ops get `file:line:col` locations) and verifies `text`.

    A `name` ending in `.c` goes through the C frontend (`tapeflow.frontends.c`) first:
    this is the one hook through which the run/sim/bench tools accept C."""
    from tapeflow.registry import make_context

    if name.endswith(".c"):
        from tapeflow.frontends.c import compile_c

        module = compile_c(text, name)
    else:
        module = parse_module(ctx or make_context(), text, name)
    verify_module(module)
    return module


def find_function(module: ModuleOp, name: str | None) -> func.FuncOp:
    """The `func.func @name` with a body; with `name=None`, the only such function.

    `F_grad` names the one gradient of `F` when the C frontend named it after its
    activity signature (`F_dc_grad`, `tapeflow.frontends.c`) and there is only one."""
    funcs = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    defined = [f for f in funcs if f.body.blocks and f.body.block.ops]
    names = ", ".join(f"@{f.sym_name.data}" for f in defined) or "none"
    if name is None:
        if len(defined) != 1:
            raise ToolError(f"no --entry given and the module defines {names}")
        return defined[0]
    for f in funcs:
        if f.sym_name.data == name:
            if f not in defined:
                raise ToolError(f"function @{name} is only declared, it has no body")
            return f
    primal = name.removesuffix("_grad")
    signed = [f for f in defined if primal != name
              and re.fullmatch(rf"{re.escape(primal)}_[dca]+_grad", f.sym_name.data)]  # fmt: skip
    if len(signed) == 1:
        return signed[0]
    known = [f.sym_name.data for f in defined]
    close = [f.sym_name.data for f in signed] or difflib.get_close_matches(name, known, n=3)
    primals = [n for n in known if re.fullmatch(rf"{re.escape(primal)}(_[dca]+)?", n)]
    if primal != name and primals and not any(n.endswith("_grad") for n in known):
        hint = (
            f"; @{name} is made by tapeflow-opt: run `tapeflow-opt FILE --tapeflow "
            "-o FILE-tf.mlir` and give that file (a .c file holds the primal only)"
        )
    elif close:
        hint = f"; did you mean {' or '.join(f'@{n}' for n in close)}?"
    else:
        hint = ""
    raise ToolError(f"no function @{name} in the module (it defines {names}){hint}")


# ---------------------------------------------------------------------------------------
# NumPy <-> interpreter values


def _dtype(el_type: Attribute, index_bitwidth: int = 64) -> np.dtype[Any]:
    if isinstance(el_type, Float64Type):
        return np.dtype("<f8")
    if isinstance(el_type, Float32Type):
        return np.dtype("<f4")
    if isinstance(el_type, Float16Type):
        return np.dtype("<f2")
    if isinstance(el_type, IndexType):
        return np.dtype(f"<i{index_bitwidth // 8}")
    if isinstance(el_type, IntegerType):
        width = el_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            return np.dtype(f"<i{width // 8}")
    raise ToolError(f"element type {el_type} is not supported by the runner")


def _storage_dtype(el_type: Attribute, index_bitwidth: int = 64) -> np.dtype[Any]:
    dt = _dtype(el_type, index_bitwidth)
    return np.dtype("<i1") if dt == np.bool_ else dt


def to_numpy(array: ShapedArray[Any], el_type: Attribute, index_bitwidth: int = 64):
    """A NumPy copy of an interpreter memref value."""
    storage = _storage_dtype(el_type, index_bitwidth)
    if type(array) is not ShapedArray:  # a strided view (memref.subview)
        flat = np.array(array.data, dtype=storage)
        return flat.astype(_dtype(el_type, index_bitwidth)).reshape(array.shape)
    ptr = array.data_ptr
    flat = np.frombuffer(
        ptr.raw.memory, dtype=storage, count=array.size, offset=ptr.raw.offset
    ).copy()
    return flat.astype(_dtype(el_type, index_bitwidth)).reshape(array.shape)


def from_numpy(
    array: np.ndarray, memref_type: MemRefType[Any], index_bitwidth: int = 64
) -> ShapedArray[Any]:
    """A new interpreter memref holding a copy of `array` (cast to the element type)."""
    el_type = memref_type.get_element_type()
    storage = _storage_dtype(el_type, index_bitwidth)
    data = np.ascontiguousarray(np.asarray(array).astype(storage, copy=False))
    xtype = xtype_for_el_type(el_type, index_bitwidth)  # type: ignore[arg-type]
    ptr = TypedPtr[Any](RawPtr(bytearray(data.tobytes())), xtype=xtype)
    return ShapedArray(ptr, list(data.shape))


def checked_array(position: int, array: Any, memref_type: MemRefType[Any], bw: int):
    """`array` as an ndarray of the memref's dtype, or ToolError if it does not fit."""
    el_type = memref_type.get_element_type()
    arr = np.asarray(array)
    shape = list(memref_type.get_shape())
    if len(arr.shape) != len(shape) or any(s >= 0 and s != a for s, a in zip(shape, arr.shape)):
        raise ToolError(
            f"argument {position} ({memref_type}) given an array of shape {list(arr.shape)}"
        )
    dt = _dtype(el_type, bw)
    if arr.dtype == dt:
        return arr
    if arr.dtype.kind not in "biuf":
        raise ToolError(f"argument {position} ({memref_type}) needs real numbers, got {arr.dtype}")
    if dt.kind in "iub" and arr.dtype.kind not in "iub":
        raise ToolError(f"argument {position} ({memref_type}) needs integer data, got {arr.dtype}")
    converted = arr.astype(dt)
    if dt.kind in "iu" and not np.array_equal(converted, arr):
        raise ToolError(f"argument {position} ({memref_type}): values out of range for {dt}")
    return converted


# ---------------------------------------------------------------------------------------
# Arguments


def parse_scalar(text: str, type_: Attribute, index_bitwidth: int = 64) -> float | int | bool:
    """A scalar of type `type_` from its command-line spelling.

    Floats: Python float syntax (`1.5`, `-2e-3`, `inf`, `nan`) or hex (`0x1.8p1`),
    rounded to the type. Integers and index: decimal, `0x..`, `0b..`; i1 also
    `true`/`false`. Integers must fit the type, read as signed or unsigned.
    """
    from tapeflow.interpreters.extra_ops import round_float

    if is_float_type(type_):
        try:
            value = float.fromhex(text) if "0x" in text.lower() else float(text)
        except ValueError:
            raise ToolError(f"expected a {type_} value, got '{text}'") from None
        return round_float(type_, value)
    if isinstance(type_, IntegerType | IndexType):
        width = type_.width.data if isinstance(type_, IntegerType) else index_bitwidth
        if width == 1 and text.lower() in ("true", "false"):
            return text.lower() == "true"
        try:
            value = int(text, 0)
        except ValueError:
            raise ToolError(f"expected an integer of type {type_}, got '{text}'") from None
        if not -(1 << (width - 1)) <= value < (1 << width):
            raise ToolError(f"{value} does not fit in {type_}")
        if width == 1:
            return bool(value & 1)
        return value - (1 << width) if value >= (1 << (width - 1)) else value
    raise ToolError(f"cannot give a value of type {type_} on the command line")


def _default_fill(position: int, memref_type: MemRefType[Any], seed: int, bw: int):
    el_type = memref_type.get_element_type()
    shape = list(memref_type.get_shape())
    if any(d < 0 for d in shape):
        raise ToolError(
            f"argument {position} ({memref_type}) has a dynamic shape: give its data with --inputs"
        )
    dt = _dtype(el_type, bw)
    if is_float_type(el_type):
        rng = np.random.default_rng([seed, position])
        draws = rng.uniform(-1.0, 1.0, size=math.prod(shape))
        return draws.astype(dt).reshape(shape)
    return np.zeros(shape, dtype=dt)


def make_arguments(
    func_op: func.FuncOp,
    seed: int = 0,
    inputs: Mapping[int | str, Any] | None = None,
    scalars: Sequence[str | float | int | bool] = (),
    zero: Sequence[int] = (),
    index_bitwidth: int = 64,
    fill_positions: Mapping[int, int] | None = None,
    shape_of: Mapping[int, int] | None = None,
) -> list[Value]:
    """The arguments for one call of `func_op`, following the module's fill rule.

    `inputs` gives explicit values, keyed by position (`0`, `"0"`, `"arg0"`, or
    `"arr_0"` as `numpy.savez` names unnamed arrays) or by the argument's SSA name in
    the source (`"A"` for `%A`); memrefs take arrays of their shape, scalars Python
    numbers. `scalars` gives the scalar arguments not in `inputs`,
    in signature order (strings are parsed by type). `zero` lists memref positions to
    fill with zeros. `fill_positions` maps an argument's position to the position whose
    default fill it takes (see `gradient_layout`). `shape_of` maps a memref's position to
    an earlier one whose shape it takes when it is zero-filled and its own shape is
    dynamic (a shadow takes its primal's: `shadow_shapes`). Raises ToolError when something does
    not fit.
    """
    arg_types = list(func_op.function_type.inputs.data)
    by_position = _inputs_by_position(func_op, inputs or {})
    for p in zero:
        if not 0 <= p < len(arg_types) or not isinstance(arg_types[p], MemRefType):
            raise ToolError(f"--zero {p}: argument {p} is not a memref argument")
    scalar_positions = [
        p for p, t in enumerate(arg_types) if not isinstance(t, MemRefType) and p not in by_position
    ]
    if len(scalars) != len(scalar_positions):
        types = ", ".join(str(arg_types[p]) for p in scalar_positions) or "none"
        raise ToolError(
            f"@{func_op.sym_name.data} takes {len(scalar_positions)} scalar argument(s) "
            f"({types}), got {len(scalars)}"
        )
    given_scalars = dict(zip(scalar_positions, scalars))
    values: list[Value] = []
    for p, t in enumerate(arg_types):
        if isinstance(t, MemRefType):
            if p in by_position:
                values.append(checked_array(p, by_position[p], t, index_bitwidth))
                continue
            _check_size(func_op, p, t, index_bitwidth)
            source = (shape_of or {}).get(p)
            dtype = _dtype(t.get_element_type(), index_bitwidth)
            dynamic = any(d < 0 for d in t.get_shape())
            if p in zero and dynamic and source is not None and source < p:
                # Zeros (a shadow) of the shape of the array at `source`, which passed
                # the same memref type's check.
                values.append(np.zeros(np.shape(values[source]), dtype=dtype))
            elif p in zero:
                values.append(np.zeros(_static_shape(p, t), dtype=dtype))
            else:
                fill_p = (fill_positions or {}).get(p, p)
                values.append(_default_fill(fill_p, t, seed, index_bitwidth))
        else:
            raw = by_position[p] if p in by_position else given_scalars[p]
            values.append(scalar_value(raw, t, index_bitwidth))
    return values


def read_inputs(specs: Sequence[str], func_op: func.FuncOp) -> dict[int | str, Any]:
    """`make_arguments`' `inputs` from `--inputs` specs (the rule of tapeflow-run, -sim,
    -exec and -bench): `data.npz` (its arrays by name or position), `P=a.npy` or
    `NAME=a.npy` (one argument), or `a.npy` when `func_op` has one memref argument.
    Raises `ToolError` naming the spec or file at fault."""
    memrefs = [p for p, t in enumerate(func_op.function_type.inputs.data)
               if isinstance(t, MemRefType)]  # fmt: skip
    inputs: dict[int | str, Any] = {}

    def put(key: int | str, value: Any) -> None:
        if key in inputs:
            raise ToolError(f"--inputs: '{key}' given twice")
        inputs[key] = value

    for spec in specs:
        key, sep, path = spec.partition("=")
        if not sep:
            key, path = "", spec
        data = load_array_file(path)
        if isinstance(data, dict):
            if key:
                raise ToolError(f"--inputs {spec}: give an .npz file without a prefix")
            for name, array in data.items():
                put(name, array)
        elif key:
            put(key, data)
        elif len(memrefs) == 1:
            put(memrefs[0], data)
        else:
            raise ToolError(
                f"--inputs {spec}: the function has {len(memrefs)} memref "
                "arguments; say which one with P=file.npy"
            )
    return inputs


def load_array_file(path: str) -> dict[str, Any] | Any:
    """The array of a .npy file, or the arrays of a .npz file by name (all read now, so
    a corrupt member is reported here)."""
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            return data
        with data:
            return {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise ToolError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"{path}: is a directory") from None
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise ToolError(f"{path}: not a valid .npy/.npz file ({e})") from None


def gradient_layout(module: ModuleOp, func_op: func.FuncOp) -> tuple[dict[int, int], list[int]]:
    """For `@F_grad` made by tapeflow-autodiff from `@F` (also in `module`): which
    `@F` position each argument mirrors, and the shadow positions.

    Enzyme's convention (docs/CONTRACTS.md): `@F_grad` takes `@F`'s arguments in order,
    each float memref not marked `tapeflow.const` followed by its shadow, then any seed
    scalars. Filling argument
    `q` as `@F`'s argument `p` gives `@F_grad` the same primal data as a run of `@F`;
    shadows start at zero. Returns `({}, [])` when `func_op` is not such a function.
    """
    name = func_op.sym_name.data
    if not name.endswith("_grad"):
        return {}, []
    primal = next(
        (
            op
            for op in module.walk()
            if isinstance(op, func.FuncOp) and op.sym_name.data == name[: -len("_grad")]
        ),
        None,
    )
    if primal is None:
        return {}, []
    grad_types = list(func_op.function_type.inputs.data)
    with_shadow = shadowed(primal)
    mirror: dict[int, int] = {}
    shadows: list[int] = []
    q = 0
    for p, t in enumerate(primal.function_type.inputs.data):
        if q >= len(grad_types) or grad_types[q] != t:
            return {}, []
        mirror[q] = p
        q += 1
        if p in with_shadow:
            if q >= len(grad_types) or grad_types[q] != t:
                return {}, []
            shadows.append(q)
            q += 1
    return mirror, shadows


def shadow_shapes(module: ModuleOp, func_op: func.FuncOp) -> dict[int, int]:
    """For `@F_grad`: shadow position -> its primal's position (each float memref is
    followed by its shadow, of the same type), so a dynamic shadow can be sized from the
    primal given in `inputs`."""
    _, shadows = gradient_layout(module, func_op)
    return {q: q - 1 for q in shadows}


def _static_shape(position: int, t: MemRefType[Any]) -> list[int]:
    shape = list(t.get_shape())
    if any(d < 0 for d in shape):
        raise ToolError(f"argument {position} ({t}) has a dynamic shape: give it with --inputs")
    return shape


def _check_size(func_op: func.FuncOp, position: int, t: MemRefType[Any], bw: int) -> None:
    """A ToolError at `func_op`, before NumPy tries, when argument `position` (a memref
    to allocate) cannot fit in memory."""
    shape = t.get_shape()
    if any(d < 0 for d in shape):
        return  # no size: reported by the fill
    nbytes = math.prod(shape) * _dtype(t.get_element_type(), bw).itemsize
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 1 << 40
    if nbytes > memory:
        raise ToolError(
            op_error(
                func_op,
                f"argument {position} ({t}) is too large: it needs {nbytes} bytes and this "
                f"machine has {memory} bytes of memory",
            )
        )


def scalar_value(raw: Any, t: Attribute, bw: int) -> Value:
    """A Python, NumPy or text scalar as the interpreter's value of type `t`."""
    from tapeflow.interpreters.extra_ops import round_float

    if isinstance(raw, np.ndarray) and raw.shape == ():
        raw = raw.item()
    if isinstance(raw, np.generic):
        raw = raw.item()
    if isinstance(raw, complex):
        raise ToolError(f"an argument of type {t} cannot take the complex value {raw!r}")
    if isinstance(raw, str):
        return parse_scalar(raw, t, bw)
    if is_float_type(t) and isinstance(raw, int | float) and not isinstance(raw, bool):
        return round_float(t, float(raw))
    if isinstance(t, IntegerType | IndexType) and isinstance(raw, int):
        return parse_scalar(str(int(raw)), t, bw)
    if isinstance(raw, int | float):
        raise ToolError(f"an argument of type {t} cannot take {raw!r}")
    return raw  # an opaque value (e.g. a tape cache): passed through


def arg_names(func_op: func.FuncOp) -> list[str | None]:
    """The source names of `func_op`'s arguments (`A` for `%A`; None when unnamed)."""
    return [source_name(arg.name_hint) for arg in func_op.body.block.args]


def _inputs_by_position(func_op: func.FuncOp, inputs: Mapping[int | str, Any]):
    n = len(func_op.function_type.inputs.data)
    names = arg_names(func_op)
    result: dict[int, Any] = {}
    for key, value in inputs.items():
        position: int | None = None
        if isinstance(key, int):
            position = key
        elif key.isdigit():
            position = int(key)
        elif key.startswith("arg") and key[3:].isdigit():
            position = int(key[3:])
        elif key.startswith("arr_") and key[4:].isdigit():  # numpy.savez(f, a, b)
            position = int(key[4:])
        elif key in names:
            position = names.index(key)
        if position is None or not 0 <= position < n:
            known = ", ".join(f"arg{p}" + (f" (%{nm})" if nm else "") for p, nm in enumerate(names))
            raise ToolError(
                f"input '{key}' matches no argument of @{func_op.sym_name.data} "
                f"(arguments: {known or 'none'})"
            )
        if position in result:
            raise ToolError(f"argument {position} given twice in the inputs")
        result[position] = value
    return result


# ---------------------------------------------------------------------------------------
# Running


class _OpStack(Interpreter.Listener):
    """Tracks the ops being interpreted, so a failure can name the innermost one."""

    def __init__(self) -> None:
        self.stack: list[Operation] = []

    def will_interpret_op(self, op: Operation, args: Any) -> None:
        self.stack.append(op)

    def did_interpret_op(self, op: Operation, results: Any) -> None:
        self.stack.pop()


def run_function(
    module: ModuleOp,
    name: str,
    args: Sequence[Value],
    *,
    ctx: Context | None = None,
    listeners: Sequence[Interpreter.Listener] = (),
    interpreter: Interpreter | None = None,
) -> RunResult:
    """Calls `@name` with `args` (NumPy arrays for memrefs, Python scalars otherwise).

    NumPy arrays passed in receive the final contents of their memref. `listeners` are
    attached to a fresh interpreter (`make_interpreter`); pass `interpreter` to use one
    you made. Any failure during the run is re-raised as an `InterpretationError` that
    names the failing op and its location (the IR dump xDSL attaches is dropped).
    """
    from tapeflow.interpreters import make_interpreter

    func_op = find_function(module, name)
    arg_types = list(func_op.function_type.inputs.data)
    result_types = list(func_op.function_type.outputs.data)
    if len(args) != len(arg_types):
        raise ToolError(f"@{name} takes {len(arg_types)} argument(s), got {len(args)}")
    tracker = _OpStack()
    if interpreter is None:
        interpreter = make_interpreter(module, ctx, (*listeners, tracker))
    else:
        interpreter.listeners = (*interpreter.listeners, tracker)
    bw = interpreter.index_bitwidth
    values = call_arguments(args, arg_types, bw)
    try:
        raw_results = interpreter.call_op(func_op, tuple(values))
    except RecursionError:
        raise InterpretationError(f"@{name}: recursion too deep") from None
    except Exception as error:
        raise runtime_error(error, tracker.stack) from error
    finally:
        if tracker in interpreter.listeners:
            interpreter.listeners = tuple(x for x in interpreter.listeners if x is not tracker)
    return run_result(name, args, values, raw_results, arg_types, result_types, bw)


def call_arguments(args: Sequence[Any], arg_types: Sequence[Attribute], bw: int) -> list[Any]:
    """`args` (NumPy arrays or `ShapedArray`s for memrefs, Python scalars otherwise) as the
    values a call of a function taking `arg_types` is given (shared by the fast path)."""
    values: list[Any] = []
    for p, (value, t) in enumerate(zip(args, arg_types)):
        if isinstance(t, MemRefType):
            if isinstance(value, ShapedArray):
                values.append(value)
            else:
                values.append(from_numpy(checked_array(p, value, t, bw), t, bw))
        else:
            values.append(scalar_value(value, t, bw))
    return values


def run_result(
    name: str,
    args: Sequence[Any],
    values: Sequence[Any],
    raw_results: Sequence[Any],
    arg_types: list[Attribute],
    result_types: list[Attribute],
    bw: int,
) -> RunResult:
    """The `RunResult` of a call given `args` (converted to `values` by `call_arguments`)
    that returned `raw_results`. NumPy arrays passed in receive the final contents of
    their memref (shared by the fast path)."""
    final_args: list[Value] = []
    memref_positions: list[int] = []
    for p, (given, value, t) in enumerate(zip(args, values, arg_types)):
        if isinstance(t, MemRefType):
            memref_positions.append(p)
            final = to_numpy(value, t.get_element_type(), bw)
            if isinstance(given, np.ndarray) and given.flags.writeable:
                np.copyto(given, final.astype(given.dtype, copy=False), casting="unsafe")
            final_args.append(final)
        else:
            final_args.append(given)
    results = [_to_python(v, t, bw) for v, t in zip(raw_results, result_types)]
    return RunResult(name, results, result_types, final_args, arg_types, memref_positions)


def _to_python(value: Any, t: Attribute, bw: int) -> Value:
    if isinstance(t, MemRefType) and isinstance(value, ShapedArray):
        return to_numpy(value, t.get_element_type(), bw)
    if is_float_type(t):
        return float(value)
    if isinstance(t, IntegerType) and t.width.data == 1:
        return bool(value)
    if isinstance(t, IntegerType | IndexType):
        return int(value)
    return value


# ---------------------------------------------------------------------------------------
# Formatting


def _plain(value: Any) -> Any:
    """Lists/scalars of Python numbers (float repr is exact)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def format_text(result: RunResult) -> str:
    """One line per returned value, then one per memref argument:

        result[0]: f64 = 0.479425538604203
        arg[1]: memref<4xf64> = [0.1, -0.25, 0.5, 1.0]

    Floats print as Python's `repr` (shortest exact spelling of the value)."""
    lines = [
        f"result[{i}]: {t} = {_text(v)}"
        for i, (v, t) in enumerate(zip(result.results, result.result_types))
    ]
    for p in result.memref_positions:
        lines.append(f"arg[{p}]: {result.argument_types[p]} = {_text(result.arguments[p])}")
    return "\n".join(lines) + ("\n" if lines else "")


def _text(value: Any) -> str:
    if isinstance(value, np.ndarray) and value.dtype != np.bool_:
        return repr(value.tolist())  # fast path: no bools inside
    value = _plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return repr(value)


def _json_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return repr(value)


def format_json(result: RunResult) -> dict[str, Any]:
    """A JSON-ready dict:

        {"function": "f",
         "results": [{"index": 0, "type": "f64", "value": 0.479425538604203}],
         "arguments": [{"index": 1, "type": "memref<4xf64>", "shape": [4],
                        "value": [0.1, ...]}]}

    `arguments` holds the memref arguments after the run. Floats keep full precision
    (`json.dumps` writes `repr`); NaN and infinities are the strings "nan", "inf",
    "-inf" so the output is strict JSON."""
    results = [
        {"index": i, "type": str(t), "value": _json_value(_plain(v))}
        | ({"shape": list(v.shape)} if isinstance(v, np.ndarray) else {})
        for i, (v, t) in enumerate(zip(result.results, result.result_types))
    ]
    arguments = [
        {
            "index": p,
            "type": str(result.argument_types[p]),
            "shape": list(result.arguments[p].shape),
            "value": _json_value(_plain(result.arguments[p])),
        }
        for p in result.memref_positions
    ]
    return {"function": result.function, "results": results, "arguments": arguments}
