"""Interpreter functions for the arith, math, memref, scf, affine and cf ops xDSL 0.74 lacks.

`register_extra_ops(interpreter)` adds them to an interpreter that already holds xDSL's
standard implementations (`xdsl.interpreters.register_implementations`). It registers:

- `ArithTableFunctions`, `MathTableFunctions`: every scalar op of the table in
  `tapeflow.semantics` that has a function (their one definition, shared with the fast
  path and its numba kernels): float ops, integer division, casts, extensions,
  truncations, bitcast, the extended ops, libm. They replace xDSL's versions
  (`override=True`): float ops round to the result type (an f32 kernel computes in f32;
  xDSL computes every float in f64), and a zero divisor is the op's own error (xDSL
  asserts).
- `ExtraMemRefFunctions`: alloca, copy, dim, rank, cast, memory_space_cast,
  collapse_shape, expand_shape, atomic_rmw, and subview / reinterpret_cast, whose
  results are `StridedArray` views sharing the source's buffer.
- `ExtraScfFunctions`: execute_region, parallel (run sequentially) with reduce.
- `ExtraAffineFunctions`: affine.if and affine.min.
- `ExtraCfFunctions`: cf.assert (a failed assertion is an `InterpretationError` whose
  message is the assert's, which TapeFlow's lowerings start with the source location),
  cf.switch.

and, replacing xDSL's version (`override=True`) where that version is wrong for us:

- memref.alloc sizes dynamic dimensions from its operands (xDSL ignores them),
  memref.get_global gives one buffer per global (xDSL copies it at each use), and
  memref.load/store check their indices (xDSL reads or writes a neighbouring element,
  or another buffer's bytes, when an index is out of range);
- affine.for accepts bound operands, max/min bound maps and iter_args, and affine
  load/store/apply accept symbol operands (xDSL asserts on all of these).

Value conventions (xDSL's): a float is a Python `float` holding a value of the op's
type (an f32 value is a float exactly representable in float32); an integer or index is
a Python `int` in the signed canonical range of its width (`to_signed`); an i1 may also
be a `bool`. Integer ops wrap to their bit width. Floats follow IEEE semantics: division
by zero gives an infinity or NaN, a domain error gives NaN, an overflow an infinity,
where Python's `math` would raise. Transcendental functions use Python's `math` (the
platform libm) on the f64 value and round the result to the result type.
"""

from __future__ import annotations

import math as pymath
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, product
from typing import Any

from xdsl.dialects import affine, arith, builtin, cf, math, memref, scf
from xdsl.dialects.builtin import (
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    Successor,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.builtin import xtype_for_el_type
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.ir.affine.affine_set import AffineConstraintExpr, AffineConstraintKind
from xdsl.utils.exceptions import InterpretationError

from tapeflow import semantics as S
from tapeflow.diagnostics import op_error

__all__ = [
    "ArithTableFunctions",
    "CheckedMemRefFunctions",
    "ExtraAffineFunctions",
    "ExtraCfFunctions",
    "ExtraMemRefFunctions",
    "ExtraScfFunctions",
    "MathTableFunctions",
    "StridedArray",
    "register_extra_ops",
    "round_float",
    "strided_layout",
]


def register_extra_ops(interpreter: Interpreter) -> None:
    """Adds the missing ops (and the corrected ones) to `interpreter`."""
    interpreter.register_implementations(ArithTableFunctions(), override=True)
    interpreter.register_implementations(MathTableFunctions(), override=True)
    interpreter.register_implementations(ExtraMemRefFunctions())
    interpreter.register_implementations(ExtraScfFunctions())
    interpreter.register_implementations(ExtraAffineFunctions())
    interpreter.register_implementations(ExtraCfFunctions())
    interpreter.register_implementations(CheckedMemRefFunctions(), override=True)
    interpreter.register_implementations(AffineOverrideFunctions(), override=True)


# ---------------------------------------------------------------------------------------
# Helpers: rounding, integer widths.


def round_float(type_: Attribute, x: float) -> float:
    """`x` rounded to the float type `type_` (f64, f32, f16, bf16), as a Python float."""
    if type(type_) is Float64Type:
        return x
    rnd = S.ROUNDERS.get(type(type_))
    return float(x) if rnd is None else rnd(x)


def _width(interpreter: Interpreter, type_: Attribute) -> int:
    if isinstance(type_, IntegerType):
        return type_.width.data
    if isinstance(type_, IndexType):
        return interpreter.index_bitwidth
    raise InterpretationError(f"expected an integer or index type, got {type_}")


_s = S.wrap


def _fail(op: Operation, message: str) -> InterpretationError:
    return InterpretationError(op_error(op, message))


class _FloatFunctions(InterpreterFunctions):
    """Base of the classes whose float ops round to their result type. Which rounding
    an op needs is looked up once per op (type lookups cost more than the arithmetic)."""

    def __init__(self) -> None:
        self._rounders: dict[int, tuple[Operation, Callable[[float], float] | None]] = {}
        self._types: dict[int, tuple[Operation, tuple[S.Ty | None, ...]]] = {}

    def types(self, interpreter: Interpreter, op: Operation) -> tuple[S.Ty | None, ...]:
        """The `Ty` of each operand and result of `op` (looked up once per op)."""
        entry = self._types.get(id(op))
        if entry is None or entry[0] is not op:
            bw = interpreter.index_bitwidth
            entry = (op, tuple(S.scalar_type(v.type, bw) for v in (*op.operands, *op.results)))
            self._types[id(op)] = entry
        return entry[1]

    def rounder(self, op: Operation) -> Callable[[float], float] | None:
        entry = self._rounders.get(id(op))
        if entry is None or entry[0] is not op:
            entry = (op, S.ROUNDERS.get(type(op.results[0].type)))
            self._rounders[id(op)] = entry
        return entry[1]


# ---------------------------------------------------------------------------------------
# The scalar ops of `tapeflow.semantics` (one class per dialect, built from the table).


def _float_impl(fn: Callable[..., float]) -> Callable[..., PythonValues]:
    def run(self: _FloatFunctions, interpreter: Interpreter, op: Operation, args: PythonValues):
        entry = self._rounders.get(id(op))
        rnd = entry[1] if entry is not None and entry[0] is op else self.rounder(op)
        r = fn(*args)
        return (r,) if rnd is None else (rnd(r),)

    return run


def _exact_impl(fn: Callable[..., float]) -> Callable[..., PythonValues]:
    return lambda self, interpreter, op, args: (fn(*args),)


def _int_impl(fn: Callable[..., int]) -> Callable[..., PythonValues]:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        try:
            return (fn(*args, _width(interpreter, op.results[0].type)),)
        except S.Guard as why:
            raise _fail(op, str(why)) from None

    return run


def _multi_impl(fn: Callable[..., tuple[int, ...]]) -> Callable[..., PythonValues]:
    return lambda self, interpreter, op, args: fn(*args, _width(interpreter, op.results[0].type))


def _typed_impl(fn: Callable[..., Any]) -> Callable[..., PythonValues]:
    def run(self: _FloatFunctions, interpreter: Interpreter, op: Operation, args: PythonValues):
        try:
            return (fn(*args, *self.types(interpreter, op)),)
        except S.Guard as why:
            raise _fail(op, str(why)) from None

    return run


_IMPL_OF = {"float": _float_impl, "exact": _exact_impl, "int": _int_impl,
            "multi": _multi_impl, "typed": _typed_impl}  # fmt: skip


def _table_functions(dialect: Dialect) -> type[_FloatFunctions]:
    """An `InterpreterFunctions` class with every table entry of `dialect` that has a
    function (the table's semantics replace xDSL's where xDSL has an implementation)."""
    ops = {cls.name: cls for cls in dialect.operations}
    attrs: dict[str, Any] = {}
    for entry in S.SCALARS.values():
        if entry.name in ops and entry.kind:
            run = _IMPL_OF[entry.kind](entry.fn)  # type: ignore[arg-type]
            attrs["run_" + entry.name.partition(".")[2]] = impl(ops[entry.name])(run)
    name = f"{dialect.name.capitalize()}TableFunctions"
    return register_impls(type(name, (_FloatFunctions,), attrs))


ArithTableFunctions = _table_functions(arith.Arith)
MathTableFunctions = _table_functions(math.Math)


# ---------------------------------------------------------------------------------------
# memref


def _element_xtype(interpreter: Interpreter, memref_type: MemRefType[Any]):
    return xtype_for_el_type(memref_type.get_element_type(), interpreter.index_bitwidth)


def _allocate(
    interpreter: Interpreter, op: memref.AllocOp | memref.AllocaOp, dynamic: Sequence[int]
) -> ShapedArray[Any]:
    memref_type = op.memref.type
    assert isinstance(memref_type, MemRefType)
    sizes = iter(dynamic)
    shape: list[int] = []
    for dim in memref_type.get_shape():
        if dim == builtin.DYNAMIC_INDEX:
            size = next(sizes)
            if size < 0:
                raise _fail(op, f"negative dynamic size {size}")
            shape.append(size)
        else:
            shape.append(dim)
    size = 1
    for dim in shape:
        size *= dim
    if isinstance(memref_type.get_element_type(), MemRefType):
        # A memref of memrefs (the slot of Enzyme's growable tape): its elements are
        # runtime memrefs, held in a Python list (xDSL has no pointer element type).
        return ShapedArray(ObjectStorage([None] * size), shape)
    xtype = _element_xtype(interpreter, memref_type)
    return ShapedArray(TypedPtr[Any].zeros(size, xtype=xtype), shape)


class ObjectStorage(list[Any]):
    """Storage of a memref whose elements are memrefs: a list, indexed like a TypedPtr."""

    xtype = None


@dataclass
class StridedArray(ShapedArray[Any]):
    """A strided view of a buffer (the result of memref.subview / reinterpret_cast):
    element `idx` is `data_ptr[start + sum(i * s for i, s in zip(idx, strides))]`,
    where `data_ptr` is the whole underlying buffer, shared with the source."""

    strides: list[int] = field(default_factory=list[int])
    start: int = 0

    def offset(self, index: Sequence[int]) -> int:
        return self.start + sum(i * s for i, s in zip(index, self.strides, strict=True))

    @property
    def data(self) -> list[Any]:
        return [self.data_ptr[self.offset(idx)] for idx in self.indices()]


def strided_layout(array: ShapedArray[Any]) -> tuple[list[int], int]:
    """(strides, start) of `array` in elements of its buffer."""
    if isinstance(array, StridedArray):
        return list(array.strides), array.start
    strides: list[int] = []
    step = 1
    for dim in reversed(array.shape):
        strides.append(step)
        step *= dim
    return strides[::-1], 0


def _is_contiguous(array: ShapedArray[Any]) -> bool:
    strides, start = strided_layout(array)
    return start == 0 and strides == strided_layout(ShapedArray(array.data_ptr, array.shape))[0]


def kept_dims(sizes: Sequence[int], result_shape: Sequence[int]) -> Sequence[int] | None:
    """Which source dims a rank-reducing subview keeps: the dropped ones have size 1 and
    the kept ones match the result type (a dynamic result dim matches any size)."""
    for kept in combinations(range(len(sizes)), len(result_shape)):
        dropped_ok = all(sizes[k] == 1 for k in range(len(sizes)) if k not in kept)
        match = all(r == builtin.DYNAMIC_INDEX or r == sizes[k] for k, r in zip(kept, result_shape))
        if dropped_ok and match:
            return kept
    return None


def _mixed(static: Sequence[int], dynamic: Sequence[int]) -> list[int]:
    values = iter(dynamic)
    return [next(values) if v == builtin.DYNAMIC_INDEX else v for v in static]


def element_offset(op: Operation, array: ShapedArray[Any], indices: Sequence[int]) -> int:
    shape = array.shape
    if len(indices) != len(shape):
        raise _fail(op, f"{len(indices)} indices for a memref of rank {len(shape)}")
    offset = 0
    for index, dim in zip(indices, shape):
        if not 0 <= index < dim:
            raise _fail(
                op, f"index {list(indices)} out of bounds for memref of shape {list(shape)}"
            )
        offset = offset * dim + index
    if type(array) is StridedArray:
        return array.offset(indices)
    return offset


@register_impls
class CheckedMemRefFunctions(InterpreterFunctions):
    """Replaces xDSL's alloc (which ignores dynamic sizes), load/store (which do not
    check their indices) and get_global (a fresh copy at each use)."""

    @impl(memref.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues):
        return (_allocate(interpreter, op, args[: len(op.dynamic_sizes)]),)

    @impl(memref.LoadOp)
    def run_load(self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues):
        array, *indices = args
        return (array.data_ptr[element_offset(op, array, indices)],)

    @impl(memref.StoreOp)
    def run_store(self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues):
        value, array, *indices = args
        array.data_ptr[element_offset(op, array, indices)] = value
        return ()

    @impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: Interpreter, op: memref.GetGlobalOp, args: PythonValues
    ):
        """One buffer per global for the interpreter's life (xDSL makes a fresh copy of
        the initial value at every get_global, so a write through one was lost)."""
        from xdsl.interpreters.memref import MemRefFunctions

        buffers = self.__dict__.setdefault("globals", {})
        name = op.name_.string_value()
        if name not in buffers:
            buffers[name] = MemRefFunctions().run_get_global(interpreter, op, args).values[0]
        return (buffers[name],)


_RMW_KINDS = {0: "arith.addf", 1: "arith.addi", 2: "", 3: "arith.maximumf", 4: "arith.maxsi",
              5: "arith.maxui", 6: "arith.minimumf", 7: "arith.minsi", 8: "arith.minui",
              9: "arith.mulf", 10: "arith.muli", 11: "arith.ori", 12: "arith.andi"}  # fmt: skip
"""atomic_rmw kind -> the op it applies (its table semantics; "": assign)."""
_RMW_PLAIN: dict[str, Callable[[Any, Any], Any]] = {
    "": lambda old, v: v, "arith.addi": operator.add, "arith.muli": operator.mul,
    "arith.ori": operator.or_, "arith.andi": operator.and_,
}  # fmt: skip
"""The kinds whose op has no table function (xDSL's integer ops); the result wraps."""


@register_impls
class ExtraMemRefFunctions(InterpreterFunctions):
    """The `memref` ops xDSL 0.74 has no implementation for. Views share the buffer."""

    @impl(memref.AllocaOp)
    def run_alloca(self, interpreter: Interpreter, op: memref.AllocaOp, args: PythonValues):
        return (_allocate(interpreter, op, args[: len(op.dynamic_sizes)]),)

    @impl(memref.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: memref.CopyOp, args: PythonValues):
        source, dest = args
        if list(source.shape) != list(dest.shape):
            raise _fail(op, f"copy from shape {source.shape} to shape {dest.shape}")
        if not (_is_contiguous(source) and _is_contiguous(dest)):
            for idx in source.indices():
                dest.data_ptr[dest.offset(idx)] = source.data_ptr[source.offset(idx)]
            return ()
        src_ptr, dst_ptr = source.data_ptr, dest.data_ptr
        n = source.size * src_ptr.size
        src = src_ptr.raw.memory[src_ptr.raw.offset : src_ptr.raw.offset + n]
        dst_ptr.raw.memory[dst_ptr.raw.offset : dst_ptr.raw.offset + n] = src
        return ()

    @impl(memref.DimOp)
    def run_dim(self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues):
        array, index = args
        if not 0 <= index < len(array.shape):
            raise _fail(op, f"dimension {index} of a memref of rank {len(array.shape)}")
        return (array.shape[index],)

    @impl(memref.RankOp)
    def run_rank(self, interpreter: Interpreter, op: memref.RankOp, args: PythonValues):
        return (len(args[0].shape),)

    @impl(memref.CastOp)
    def run_cast(self, interpreter: Interpreter, op: memref.CastOp, args: PythonValues):
        return (args[0],)

    @impl(memref.MemorySpaceCastOp)
    def run_memory_space_cast(
        self, interpreter: Interpreter, op: memref.MemorySpaceCastOp, args: PythonValues
    ):
        return (args[0],)

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues
    ):
        (array,) = args
        if not _is_contiguous(array):
            raise _fail(op, "collapse_shape of a strided view is not supported")
        shape = [
            pymath.prod(array.shape[i.value.data] for i in group.data) for group in op.reassociation.data
        ]
        return (ShapedArray(array.data_ptr, shape),)

    @impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues
    ):
        array, *dynamic = args
        if not _is_contiguous(array):
            raise _fail(op, "expand_shape of a strided view is not supported")
        sizes = iter(dynamic)
        shape = [
            next(sizes) if d == builtin.DYNAMIC_INDEX else d
            for d in op.static_output_shape.get_values()
        ]
        if pymath.prod(shape) != array.size:
            raise _fail(op, f"cannot expand shape {array.shape} into {shape}")
        return (ShapedArray(array.data_ptr, shape),)

    @impl(memref.SubviewOp)
    def run_subview(self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues):
        array = args[0]
        n_off, n_size = len(op.offsets), len(op.sizes)
        offsets = _mixed(op.static_offsets.get_values(), args[1 : 1 + n_off])
        sizes = _mixed(op.static_sizes.get_values(), args[1 + n_off : 1 + n_off + n_size])
        steps = _mixed(op.static_strides.get_values(), args[1 + n_off + n_size :])
        for k, (o, n, st, dim) in enumerate(zip(offsets, sizes, steps, array.shape)):
            last = o + (n - 1) * st
            if n < 0 or (n > 0 and not (0 <= o < dim and 0 <= last < dim)):
                raise _fail(
                    op,
                    f"dimension {k}: offset {o}, size {n}, stride {st} "
                    f"out of bounds for size {dim}",
                )
        base_strides, start = strided_layout(array)
        start += sum(o * s for o, s in zip(offsets, base_strides))
        result_type = op.result.type
        assert isinstance(result_type, MemRefType)
        kept = kept_dims(sizes, result_type.get_shape())
        if kept is None:
            raise _fail(op, f"sizes {sizes} do not reduce to {result_type}")
        view = StridedArray(
            array.data_ptr,
            [sizes[k] for k in kept],
            strides=[steps[k] * base_strides[k] for k in kept],
            start=start,
        )
        return (view,)

    @impl(memref.ReinterpretCastOp)
    def run_reinterpret_cast(
        self, interpreter: Interpreter, op: memref.ReinterpretCastOp, args: PythonValues
    ):
        array = args[0]
        n_off, n_size = len(op.offsets), len(op.sizes)
        (start,) = _mixed(op.static_offsets.get_values(), args[1 : 1 + n_off])
        sizes = _mixed(op.static_sizes.get_values(), args[1 + n_off : 1 + n_off + n_size])
        steps = _mixed(op.static_strides.get_values(), args[1 + n_off + n_size :])
        raw = array.data_ptr.raw
        capacity = (len(raw.memory) - raw.offset) // array.data_ptr.size
        last = start + sum((n - 1) * st for n, st in zip(sizes, steps) if n > 0)
        if start < 0 or last >= capacity:
            raise _fail(op, f"view reaches element {last} of a buffer of {capacity}")
        return (StridedArray(array.data_ptr, sizes, strides=steps, start=start),)

    @impl(memref.AtomicRMWOp)
    def run_atomic_rmw(self, interpreter: Interpreter, op: memref.AtomicRMWOp, args: PythonValues):
        value, array, *indices = args
        kind = op.kind.value.data
        if kind not in _RMW_KINDS:
            raise _fail(op, f"atomic_rmw kind {kind} is not supported")
        offset = element_offset(op, array, indices)
        old = array.data_ptr[offset]
        el_type = op.memref.type.get_element_type()
        name = _RMW_KINDS[kind]
        entry = S.SCALARS.get(name)
        if entry is None or entry.fn is None:
            new = _RMW_PLAIN[name](old, value)
        elif entry.kind == "int":
            new = entry.fn(old, value, _width(interpreter, el_type))
        else:
            new = entry.fn(old, value)
        if isinstance(el_type, IntegerType | IndexType):
            new = _s(new, _width(interpreter, el_type))
        else:
            new = round_float(el_type, new)
        array.data_ptr[offset] = new
        return (old,)


# ---------------------------------------------------------------------------------------
# scf


@register_impls
class ExtraScfFunctions(InterpreterFunctions):
    """scf.execute_region, and scf.parallel run as a sequential loop nest."""

    @impl(scf.ExecuteRegionOp)
    def run_execute_region(
        self, interpreter: Interpreter, op: scf.ExecuteRegionOp, args: PythonValues
    ):
        return interpreter.run_ssacfg_region(op.region, (), "execute_region")

    @impl(scf.ParallelOp)
    def run_parallel(self, interpreter: Interpreter, op: scf.ParallelOp, args: PythonValues):
        n = len(op.lowerBound)
        lbs, ubs, steps = args[:n], args[n : 2 * n], args[2 * n : 3 * n]
        accumulators = list(args[3 * n :])
        reduce_op = op.body.block.last_op
        assert isinstance(reduce_op, scf.ReduceOp)
        ranges = [range(lb, ub, step) for lb, ub, step in zip(lbs, ubs, steps)]
        for point in product(*ranges):
            values = interpreter.run_ssacfg_region(op.body, point, "parallel")
            for i, value in enumerate(values):
                (accumulators[i],) = interpreter.run_ssacfg_region(
                    reduce_op.reductions[i], (accumulators[i], value), "reduce"
                )
        return tuple(accumulators)

    @impl_terminator(scf.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: scf.ReduceOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(scf.ReduceReturnOp)
    def run_reduce_return(
        self, interpreter: Interpreter, op: scf.ReduceReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


# ---------------------------------------------------------------------------------------
# affine


def _eval_map(map_attr: builtin.AffineMapAttr, operands: Sequence[int]) -> tuple[int, ...]:
    amap = map_attr.data
    return amap.eval(operands[: amap.num_dims], operands[amap.num_dims :])


@register_impls
class ExtraAffineFunctions(InterpreterFunctions):
    """affine.if and affine.min."""

    @impl(affine.IfOp)
    def run_if(self, interpreter: Interpreter, op: affine.IfOp, args: PythonValues):
        iset = op.condition.data
        dims, syms = args[: iset.num_dims], args[iset.num_dims :]
        holds = all(_holds(c, dims, syms) for c in iset.constraints)
        return interpreter.run_ssacfg_region(
            op.then_region if holds else op.else_region, (), "affine.if"
        )

    @impl(affine.MinOp)
    def run_min(self, interpreter: Interpreter, op: affine.MinOp, args: PythonValues):
        return (min(_eval_map(op.map, args)),)


def _holds(c: AffineConstraintExpr, dims: Sequence[int], syms: Sequence[int]) -> bool:
    lhs, rhs = c.lhs.eval(dims, syms), c.rhs.eval(dims, syms)
    if c.kind is AffineConstraintKind.eq:
        return lhs == rhs
    if c.kind is AffineConstraintKind.ge:
        return lhs >= rhs
    return lhs <= rhs


@register_impls
class AffineOverrideFunctions(InterpreterFunctions):
    """Replaces xDSL's affine.for/load/store/apply, which accept neither symbol operands
    nor (for `for`) bound operands, multi-result bound maps or iter_args."""

    @impl(affine.ForOp)
    def run_for(self, interpreter: Interpreter, op: affine.ForOp, args: PythonValues):
        n_lb, n_ub = len(op.lowerBoundOperands), len(op.upperBoundOperands)
        lb = max(_eval_map(op.lowerBoundMap, args[:n_lb]))
        ub = min(_eval_map(op.upperBoundMap, args[n_lb : n_lb + n_ub]))
        loop_args = tuple(args[n_lb + n_ub :])
        for i in range(lb, ub, op.step.value.data):
            loop_args = interpreter.run_ssacfg_region(op.body, (i, *loop_args), "affine.for")
        return loop_args

    @impl(affine.LoadOp)
    def run_load(self, interpreter: Interpreter, op: affine.LoadOp, args: PythonValues):
        array, *operands = args
        assert op.map is not None
        indices = _eval_map(op.map, operands)
        return (array.data_ptr[element_offset(op, array, indices)],)

    @impl(affine.StoreOp)
    def run_store(self, interpreter: Interpreter, op: affine.StoreOp, args: PythonValues):
        value, array, *operands = args
        assert op.map is not None
        indices = _eval_map(op.map, operands)
        array.data_ptr[element_offset(op, array, indices)] = value
        return ()

    @impl(affine.ApplyOp)
    def run_apply(self, interpreter: Interpreter, op: affine.ApplyOp, args: PythonValues):
        return _eval_map(op.map, args)


# ---------------------------------------------------------------------------------------
# cf

_LOCATED = re.compile(r"^\S+:\d+:\d+: ")


@register_impls
class ExtraCfFunctions(InterpreterFunctions):
    """cf.assert and cf.switch."""

    @impl(cf.AssertOp)
    def run_assert(self, interpreter: Interpreter, op: cf.AssertOp, args: PythonValues):
        if not args[0]:
            message = op.msg.data
            if not _LOCATED.match(message):
                message = op_error(op, f"assertion failed: {message}")
            raise InterpretationError(message)
        return ()

    @impl_terminator(cf.SwitchOp)
    def run_switch(
        self, interpreter: Interpreter, op: cf.SwitchOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        width = _width(interpreter, op.flag.type)
        flag = _s(args[0], width)
        cases = [] if op.case_values is None else op.case_values.get_values()
        for i, case in enumerate(cases):
            if _s(case, width) == flag:
                sizes = op.case_operand_segments.get_values()
                start = sum(sizes[:i])
                operands = op.case_operands[start : start + sizes[i]]
                return Successor(op.case_blocks[i], interpreter.get_values(operands)), ()
        return Successor(op.default_block, interpreter.get_values(op.default_operands)), ()
