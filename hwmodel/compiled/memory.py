"""Emitters of memory ops: memref and affine loads and stores (a `memoryview` over the
`ShapedArray`'s bytes, indices checked unless proven in bounds, one recorded access per
DRAM access), memref.copy, the `tape.cache` list, region tapes' records, and the ops run
as events (allocations, every `stream` op)."""

from __future__ import annotations

from xdsl.dialects import affine, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, AffineMapAttr, MemRefType
from xdsl.ir import Operation
from xdsl.ir.affine import AffineMap

from tapeflow.hwmodel.compiled.compiler import FunctionCompiler, MemInfo, emitter
from tapeflow.hwmodel.compiled.limits import OFF_SHIFT, SID_SHIFT
from tapeflow.hwmodel.costs import is_ideal_tape
from tapeflow.hwmodel.compiled.ranges import affine_plain, affine_ranges, affine_results
from tapeflow.dialects import enzyme, stream
from tapeflow.dialects.region import element_size, field_size
from tapeflow.interpreters.extra_ops import kept_dims
from tapeflow.semantics.memory import encode, record_fields

def _map_of(op: Operation, name: str) -> AffineMap:
    attr = op.properties.get(name) or op.attributes.get(name)
    assert isinstance(attr, AffineMapAttr)
    return attr.data


@emitter("affine.load")
def _affine_load(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.LoadOp)
    m = _map_of(op, "map")
    args = [c.use(v) for v in op.indices]
    ranges = affine_ranges(m, [c.range_of(v) for v in op.indices])
    info, off = c.mem_access(indent, op, op.memref, affine_results(m, args), False, ranges, args,
                             affine_plain(m))  # fmt: skip
    _load_view(c, indent, info, off, c.define(op.result))


@emitter("affine.store")
def _affine_store(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, affine.StoreOp)
    m = _map_of(op, "map")
    args = [c.use(v) for v in op.indices]
    ranges = affine_ranges(m, [c.range_of(v) for v in op.indices])
    info, off = c.mem_access(indent, op, op.memref, affine_results(m, args), True, ranges, args,
                             affine_plain(m))  # fmt: skip
    _store_view(c, indent, info, off, c.use(op.value))


# -- memref ------------------------------------------------------------------------------


@emitter("memref.load")
def _load(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, memref.LoadOp)
    idx = [c.use(v) for v in op.indices]
    ranges = [c.range_of(v) for v in op.indices]
    info, off = c.mem_access(indent, op, op.memref, idx, False, ranges)
    _load_view(c, indent, info, off, c.define(op.res))
    c.bind(op.res, indent, op)  # a memref loaded from a memref of memrefs


@emitter("memref.store")
def _store(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, memref.StoreOp)
    idx = [c.use(v) for v in op.indices]
    ranges = [c.range_of(v) for v in op.indices]
    info, off = c.mem_access(indent, op, op.memref, idx, True, ranges)
    _store_view(c, indent, info, off, c.use(op.value))


@emitter("enzyme.load", "enzyme.store")
def _enzyme_access(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """A `memref.load`/`store` of an Enzyme cache buffer that also names the buffer's
    dynamic sizes: a mismatch runs the interpreter's op, which reports it."""
    assert isinstance(op, enzyme.LoadOp | enzyme.StoreOp)
    name = c.use(op.memref)
    shape = op.memref.type.get_shape()  # type: ignore[attr-defined]
    dynamic = [f"{name}.shape[{k}]" for k, d in enumerate(shape) if d < 0]
    sizes = [c.use(v) for v in op.sizes]
    if sizes or dynamic:
        cond = f"[{', '.join(sizes)}] == [{', '.join(dynamic)}]"
        c.check(indent, cond, op, [c.use(v) for v in op.operands], [name, *sizes], False)
    idx = [c.use(v) for v in op.indices]
    store = isinstance(op, enzyme.StoreOp)
    info, off = c.mem_access(indent, op, op.memref, idx, store, [c.range_of(v) for v in op.indices])
    if isinstance(op, enzyme.StoreOp):
        _store_view(c, indent, info, off, c.use(op.value))
    else:
        _load_view(c, indent, info, off, c.define(op.result))
        c.bind(op.result, indent, op)


def _load_view(c: FunctionCompiler, indent: int, info: MemInfo, off: str, r: str) -> None:
    """`r = <memref>[off]`: a loop kernel indexes memoryviews of f64, i64/index and i32."""
    c.py(indent, f"{r} = {info.data}[{off}]", [info.data, off], [r], bool(c.views[info.data]))


def _store_view(c: FunctionCompiler, indent: int, info: MemInfo, off: str, v: str) -> None:
    c.py(indent, f"{info.data}[{off}] = {v}", [info.data, off, v], (), bool(c.views[info.data]))


@emitter("memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global")
def _memref_event(c: FunctionCompiler, op: Operation, indent: int) -> None:
    c.event(op, indent)


@emitter("memref.cast", "memref.memory_space_cast", "memref.collapse_shape", "memref.expand_shape",
         "memref.reinterpret_cast")
def _memref_view_op(c: FunctionCompiler, op: Operation, indent: int) -> None:
    k = c.cm.const(op)
    args = [c.use(v) for v in op.operands]
    (r,) = (c.define(v) for v in op.results)
    c.emit(indent, f"{r}, = _RUN({k}, ({', '.join(args)},))")
    c.bind(op.results[0], indent, op)


@emitter("memref.subview")
def _subview(c: FunctionCompiler, op: Operation, indent: int) -> None:
    """A strided view made here, its layout from its source's locals, as the
    interpreter's `run_subview` makes it (its check, then a `StridedArray` on the same
    buffer), not an interpreter call and a `bind` of the view: Enzyme-MLIR's gradients
    take a view of a cached memref in every iteration. A view whose rank reduction
    depends on a run-time size runs the interpreter's."""
    assert isinstance(op, memref.SubviewOp)
    src = c.mem.get(op.source)
    result = op.result.type
    assert isinstance(result, MemRefType)
    dynamic = iter(c.use(v) for v in op.operands[1:])
    offsets, sizes, steps = (
        [next(dynamic) if v == DYNAMIC_INDEX else str(v) for v in static.get_values()]
        for static in (op.static_offsets, op.static_sizes, op.static_strides)
    )  # fmt: skip
    known = [int(n) if _literal(n) else DYNAMIC_INDEX for n in sizes]
    kept = kept_dims(known, result.get_shape())
    if src is None or kept is None or (len(kept) < len(sizes) and DYNAMIC_INDEX in known):
        return _memref_view_op(c, op, indent)
    checks = [_in_bounds(*dim) for dim in zip(offsets, sizes, steps, src.dims, strict=True)]
    if any(checks):
        args = [c.use(v) for v in op.operands]
        cond = " and ".join(f"({t})" for t in checks if t)
        c.check(indent, cond if sum(map(bool, checks)) > 1 else cond[1:-1], op, args, args,
                False)  # fmt: skip
    name = c.define(op.result)
    start = [_times(o, s) for o, s in zip(offsets, src.strides) if o != "0"]
    start = [*start, src.start] if src.start else start
    c.locals.add(f"{name}_o")
    c.emit(indent, f"{name}_o = {' + '.join(start) or '0'}")
    strides = []
    for k in kept:
        stride = _times(steps[k], src.strides[k])
        if not _literal(stride):
            c.locals.add(local := f"{name}_s{len(strides)}")
            c.emit(indent, f"{local} = {stride}")
            stride = local
        strides.append(stride)
    dims = [sizes[k] for k in kept]
    c.emit(indent, f"{name} = _StridedArray({c.use(op.source)}.data_ptr, [{', '.join(dims)}], "
                   f"strides=[{', '.join(strides)}], start={name}_o)")  # fmt: skip
    c.mem[op.result] = MemInfo(name, src.data, src.base, strides, src.esize, dims, f"{name}_o")


def _literal(x: str) -> bool:
    return x.lstrip("-").isdigit()


def _times(a: str, b: str) -> str:
    """`a * b`, folded where both are literals or one is 1."""
    if _literal(a) and _literal(b):
        return str(int(a) * int(b))
    return b if a == "1" else a if b == "1" else f"{a} * {b}"


def _in_bounds(offset: str, size: str, step: str, dim: str) -> str:
    """`run_subview`'s check of one dimension as an expression ("": it holds)."""
    if not (_literal(size) and _literal(step)):
        last = f"{offset} + ({size} - 1) * {step}"
        return f"{size} >= 0 and ({size} == 0 or 0 <= {offset} < {dim} and 0 <= {last} < {dim})"
    n, reach = int(size), (int(size) - 1) * int(step)
    if n <= 0:
        return "" if n == 0 else "False"
    if _literal(offset) and _literal(dim):
        o, d = int(offset), int(dim)
        return "" if 0 <= o < d and 0 <= o + reach < d else "False"
    cond = f"0 <= {offset} < {dim}"
    return f"{cond} and 0 <= {offset} + {reach} < {dim}" if reach else cond


@emitter("memref.dim")
def _dim(c: FunctionCompiler, op: Operation, indent: int) -> None:
    assert isinstance(op, memref.DimOp)
    src, idx = c.use(op.source), c.use(op.index)
    c.emit(indent, f"if not 0 <= {idx} < len({src}.shape): _RUN({c.cm.const(op)}, ({src}, {idx}))")
    c.emit(indent, f"{c.define(op.result)} = {src}.shape[{idx}]")


@emitter("memref.copy")
def _copy(c: FunctionCompiler, op: Operation, indent: int) -> None:
    src, dst = (c.use(v) for v in op.operands)
    s1 = c.cm.new_sid(op, 0)
    s2 = c.cm.new_sid(op, 1)
    c.emit(indent, f"_COPY({c.cm.const(op)}, {src}, {dst}, {s1}, {s2})", "copy")
    c.has_access = True


# -- tape --------------------------------------------------------------------------------


@emitter("tape.init", "enzyme.init")
def _tape_init(c: FunctionCompiler, op: Operation, indent: int) -> None:
    c.emit(indent, f"{c.define(op.results[0])} = []")
    c.bind(op.results[0], indent, op)


def _tape_elsize(op: Operation) -> int:
    return element_size(op.operands[0].type.element_type)  # type: ignore[attr-defined]


@emitter("tape.push", "enzyme.push")
def _tape_push(c: FunctionCompiler, op: Operation, indent: int) -> None:
    cache, value = (c.use(v) for v in op.operands)
    base = c.prov[op.operands[0]]
    if not is_ideal_tape(op):  # a free tape access: no record
        low = (c.cm.new_sid(op) << SID_SHIFT) | 1
        c.access(indent, f"{base} + len({cache}) * {_tape_elsize(op) << OFF_SHIFT} + {low}", (),
                 "tape")  # fmt: skip
    c.emit(indent, f"{cache}.append({value})")


@emitter("tape.pop", "enzyme.pop")
def _tape_pop(c: FunctionCompiler, op: Operation, indent: int) -> None:
    cache = c.use(op.operands[0])
    base = c.prov[op.operands[0]]
    c.emit(indent, f"if not {cache}: _POP_EMPTY({c.cm.const(op)})")
    if not is_ideal_tape(op):  # a free tape access: no record
        low = c.cm.new_sid(op) << SID_SHIFT
        c.access(indent, f"{base} + (len({cache}) - 1) * {_tape_elsize(op) << OFF_SHIFT} + {low}",
                 (), "tape")  # fmt: skip
    c.emit(indent, f"{c.define(op.results[0])} = {cache}.pop()")
    c.bind(op.results[0], indent, op)  # a memref Enzyme-MLIR cached


@emitter("tape.free")
def _tape_free(c: FunctionCompiler, op: Operation, indent: int) -> None:
    cache = c.use(op.operands[0])
    c.emit(indent, f"if {cache}: _FREE_NONEMPTY({c.cm.const(op)}, {cache})")


# -- region ------------------------------------------------------------------------------


@emitter("region.alloc", "region.dealloc", "region.reserve")
def _region_event(c: FunctionCompiler, op: Operation, indent: int) -> None:
    c.event(op, indent)


def _record_access(c: FunctionCompiler, op: Operation, indent: int, write: bool) -> str:
    """Checks and (for a DRAM tape) records the accesses of one region.read/write."""
    tape_v = op.operands[0]
    t, i = c.use(tape_v), c.use(op.operands[1])
    k = c.cm.const_id(op)
    c.emit(indent, f"if {t}.freed or {t}.dma is not None or not 0 <= {i} < {t}.count: "
                   f"_RCHECK(_K[{k}], {t}, {i})", "rcheck", [t, i], (), t, i, k)  # fmt: skip
    base = c.prov.get(tape_v)
    if base is not None:  # a DRAM tape: one access per field, as the model charges
        rec = tape_v.type.record  # type: ignore[attr-defined]
        p = c.fresh("p")
        c.py(indent, f"{p} = {base} + {i} * {rec.size << OFF_SHIFT}", [base, i], [p])
        for off, df, _ in record_fields(rec):  # the model's accesses (tapeflow.semantics.memory)
            c.access(indent, f"{p} + {encode(off, c.cm.new_sid(op, df), int(write))}", [p])
    return t


@emitter("region.write")
def _region_write(c: FunctionCompiler, op: Operation, indent: int) -> None:
    t = _record_access(c, op, indent, True)
    vals, i = [c.use(v) for v in op.operands[2:]], c.use(op.operands[1])
    c.emit(indent, f"{t}.records[{i}] = ({', '.join(vals)},)", "rwrite", [t, i, *vals], (), t, i,
           tuple(vals))  # fmt: skip


@emitter("region.read")
def _region_read(c: FunctionCompiler, op: Operation, indent: int) -> None:
    t = _record_access(c, op, indent, False)
    i = c.use(op.operands[1])
    rec = c.fresh("r")
    c.emit(indent, f"{rec} = {t}.records[{i}]", "rread", [t, i], [rec], rec, t, i)
    c.emit(indent, f"if {rec} is None: _RNONE({c.cm.const(op)}, {t}, {i})", "rnone", [rec, t, i],
           (), rec, c.cm.const_id(op), t, i)  # fmt: skip
    res = [c.define(r) for r in op.results]
    c.emit(indent, f"{', '.join(res)}, = {rec}", "rfields", [rec], res, tuple(res), rec)


# -- stream ------------------------------------------------------------------------------


@emitter(*sorted(stream.OPS))
def _stream_event(c: FunctionCompiler, op: Operation, indent: int) -> None:
    c.event(op, indent)
