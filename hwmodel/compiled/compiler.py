"""The compiler of the fast path: one Python function per `func.func`
(`FunctionCompiler`), and the module's static tables (`ModuleCompiler`). What each op
becomes is its emitter's (`EMITTERS`: scalars.py, loops.py, memory.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import affine, builtin, func, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator as _IsTerminator
from xdsl.utils.exceptions import InterpretationError, VerifyException

from tapeflow.hwmodel import jit
from tapeflow.hwmodel.compiled.limits import (
    OFF_SHIFT,
    SID_LIMIT,
    SID_SHIFT,
    FastPathLimit,
    UnsupportedOpError,
)
from tapeflow.hwmodel.compiled.ranges import Interval, Stream, int_width
from tapeflow.hwmodel.costs import is_charged, is_ideal_tape, pc_count
from tapeflow.hwmodel.jit import Lines, St
from tapeflow.dialects import region, stream
from tapeflow.dialects.region import element_size, is_spm
from tapeflow.interpreters import runtime_error


@dataclass
class MemInfo:
    """Compile-time facts about a memref SSA value's Python locals."""

    obj: str  # the ShapedArray
    data: str  # memoryview
    base: str | None  # provisional buffer id + offset (encoded), None for the scratchpad
    strides: list[str]  # per-dimension stride expressions (constants or locals)
    esize: int  # element bytes
    dims: list[str]  # per-dimension sizes (constants or expressions)
    start: str = ""  # a strided view's first element in its buffer ("": a whole buffer)


_NESTING = (scf.ForOp, scf.IfOp, scf.WhileOp, affine.ForOp, func.CallOp)

EVENT_NAMES = frozenset(
    (
        "memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global",
        region.AllocOp.name, region.DeallocOp.name, region.ReserveOp.name, *stream.OPS,
    )
)  # fmt: skip
"""Ops run as events (`Trace.event`): the interpreter's implementation, model hooks."""

CACHE_TYPES = ("tape.cache", "enzyme.Cache")
"""LIFO tapes, Python lists: ours and Enzyme-MLIR's (the model charges them alike)."""


def simple_body(block: Block) -> bool:
    """A loop body that is a single segment without events: counted in bulk."""
    return all(
        not op.regions and not isinstance(op, func.CallOp) and op.name not in EVENT_NAMES
        for op in block.ops
    )


class FunctionCompiler:
    def __init__(self, cm: ModuleCompiler, fn: func.FuncOp):
        self.cm = cm
        self.fn = fn
        self.lines: Lines = []
        self.locals: set[str] = set()
        """Names of Python locals (what a statement's `reads` keeps: not literals)."""
        self.wide: set[str] = set()
        """Integer literals beyond int64 (no loop kernel takes a statement reading one)."""
        self.names: dict[SSAValue, str] = {}
        self.mem: dict[SSAValue, MemInfo] = {}
        self.prov: dict[SSAValue, str] = {}  # record tapes and tape caches
        self.counter = 0
        self.has_access = False
        self.offsets: list[dict[tuple[str, tuple[str, ...]], str]] = []
        """Flat offsets computed (and checked) so far, per enclosing block (reused: same
        SSA indices)."""
        self.stream: Stream | None = None
        """The bulk-counted loop body being emitted, if its accesses may be streamed."""
        self.records: dict[str, int] = {}
        """Record tape locals whose fields are all f64 -> field count (kernels take them)."""
        self.plain: dict[int, Lines] = {}
        """Variant id -> the plain loop lines it wraps (`jit.expand` puts them back)."""
        self.views: dict[str, str] = {}
        """memoryview locals -> their format if a loop kernel may index them ('d', 'q', 'i')."""
        self.ranges: dict[SSAValue, Interval] = {}
        """Proven [lo, hi] of integer values (constants, loop induction variables and
        index arithmetic on them)."""

    # -- naming ----------------------------------------------------------------------------
    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        self.locals.add(name := f"{prefix}{self.counter}")
        return name

    def define(self, value: SSAValue) -> str:
        name = self.fresh("v")
        self.names[value] = name
        return name

    def use(self, value: SSAValue) -> str:
        name = self.names.get(value)
        if name is None:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else self.fn
            raise UnsupportedOpError(op, f"fast path: value {value} used before definition")
        return name

    def emit(self, indent: int, text: str, kind: str = "", reads: Sequence[str] = (),
             writes: Sequence[str] = (), *data: Any) -> None:  # fmt: skip
        """A statement; without a `kind`, one no loop kernel takes."""
        kind = "" if self.wide.intersection(reads) else kind
        self.lines.append((indent, St(text, kind, self.local(reads), tuple(writes), data)))

    def local(self, names: Sequence[str]) -> tuple[str, ...]:
        return tuple(n for n in names if n in self.locals)

    def py(self, indent: int, text: str, reads: Sequence[str] = (), writes: Sequence[str] = (),
           ok: bool = True) -> None:  # fmt: skip
        """A statement a loop kernel takes as it is (if `ok`)."""
        self.emit(indent, text, "py" if ok else "", reads, writes)

    def variant(self, indent: int, loop: Lines) -> None:
        """Marks the start of an `if <faster variant> else: <loop>` block (`loop`: the
        plain loop's lines, at `indent`), so an enclosing kernel can take the plain loop."""
        v = len(self.plain)
        self.plain[v] = [(d - indent, st) for d, st in loop]
        self.emit(indent, f"# @variant {v}", "variant", (), (), v)

    # -- values that live in memory --------------------------------------------------------
    def bind(self, value: SSAValue, indent: int, origin: Operation) -> None:
        """Emit the locals that describe `value` if it is a memref, record tape or cache."""
        t = value.type
        name = self.names[value]
        if isinstance(t, MemRefType):
            self.bind_memref(value, name, t, indent, origin)
        elif t.name == "region.tape":
            fields = t.record.fields.data  # type: ignore[attr-defined]
            if all(isinstance(f, builtin.Float64Type) for f in fields):
                self.records[name] = len(fields)
            if not t.in_spm:  # type: ignore[attr-defined]
                self.prov[value] = f"{name}_a"
                self.locals.add(f"{name}_a")
                self.emit(indent, f"{name}_a = _RID({name})")
        elif t.name in CACHE_TYPES:
            try:
                size = element_size(t.element_type)  # type: ignore[attr-defined]
            except VerifyException:
                raise UnsupportedOpError(origin, f"fast path: tape of {t}") from None
            self.prov[value] = f"{name}_a"
            self.emit(indent, f"{name}_a = _TID({name}, {size})")

    def bind_memref(
        self, value: SSAValue, name: str, t: MemRefType[Any], indent: int, origin: Operation
    ) -> None:
        strided = isinstance(t.layout, builtin.StridedLayoutAttr)
        if not strided and not isinstance(t.layout, builtin.NoneAttr):
            raise UnsupportedOpError(origin, f"fast path: memref layout {t.layout}")
        shape = list(t.get_shape())
        try:
            esize = element_size(t.element_type)
        except VerifyException:
            raise UnsupportedOpError(origin, f"fast path: memref of {t.element_type}") from None
        data = f"{name}_d"
        self.locals.update((data, f"{name}_a"))
        self.emit(indent, f"{data} = _view({name})")
        et = t.element_type
        wide_int = isinstance(et, IndexType) or int_width(et) == 64
        i32 = int_width(et) == 32
        f64 = isinstance(et, builtin.Float64Type)
        self.views[data] = "d" if f64 else "q" if wide_int else "i" if i32 else ""
        base: str | None = None
        if not is_spm(t.memory_space):
            base = f"{name}_a"
            self.emit(indent, f"{base} = _MID({name})")
        strides: list[str] = []
        acc: str | int = 1
        for k in reversed(range(len(shape))):
            strides.append(str(acc))
            if k > 0:
                if isinstance(acc, int) and shape[k] >= 0:
                    acc = acc * shape[k]
                else:
                    dim = str(shape[k]) if shape[k] >= 0 else f"{name}.shape[{k}]"
                    sname = f"{name}_s{k - 1}"
                    self.locals.add(sname)
                    self.emit(indent, f"{sname} = {acc} * {dim}")
                    acc = sname
        strides.reverse()
        dims = [str(d) if d >= 0 else f"{name}.shape[{k}]" for k, d in enumerate(shape)]
        start = self.bind_layout(name, t.layout, strides, indent) if strided else ""
        self.mem[value] = MemInfo(name, data, base, strides, esize, dims, start)

    def bind_layout(
        self, name: str, layout: builtin.StridedLayoutAttr, strides: list[str], indent: int
    ) -> str:
        """A strided view (`memref.subview`'s result): its strides in `strides` (the
        type's where static, else the view's own), and the local of its first element."""
        lay = f"{name}_l"
        self.locals.add(lay)
        self.emit(indent, f"{lay} = _LAYOUT({name})")
        for k, s in enumerate(layout.get_strides()):
            if s is None:
                strides[k] = f"{name}_s{k}"
                self.locals.add(strides[k])
                self.emit(indent, f"{strides[k]} = {lay}[0][{k}]")
            else:
                strides[k] = str(s)
        offset = layout.get_offset()
        if offset == 0:
            return ""
        start = f"{name}_o"
        self.locals.add(start)
        self.emit(indent, f"{start} = {lay}[1]")
        return start

    # -- index ranges (what lets the generated code skip bounds checks and wrapping) -------
    def range_of(self, value: SSAValue) -> Interval | None:
        return self.ranges.get(value)

    def mem_access(
        self,
        indent: int,
        op: Operation,
        memval: SSAValue,
        indices: Sequence[str],
        write: bool,
        ranges: Sequence[Interval | None],
        reads: Sequence[str] | None = None,
        ok: bool = True,
    ) -> tuple[MemInfo, str]:
        """The flat offset of an access (computed once per block and indices); indices
        not proven in bounds (`ranges`) are checked, and a failing check runs the
        interpreter's implementation of `op`, which reports the error. `reads`: the
        locals the indices read (default: `indices`); `ok`: a loop kernel may take them."""
        info = self.mem.get(memval)
        if info is None:
            raise UnsupportedOpError(op, "fast path: memref of unknown provenance")
        if len(indices) != len(info.dims):
            raise UnsupportedOpError(op, f"fast path: {len(indices)} indices for a memref of "
                                     f"rank {len(info.dims)}")  # fmt: skip
        strides = zip(indices, info.strides, strict=True)
        terms = [i if s == "1" else f"{i} * {s}" for i, s in strides]
        if info.start:
            terms.append(info.start)
        key = (info.obj, tuple(indices))
        known = next((scope[key] for scope in reversed(self.offsets) if key in scope), None)
        if known is not None:
            off = known
        else:
            checks = [
                (i, d)
                for i, d, r in zip(indices, info.dims, ranges, strict=True)
                if not (r is not None and d.isdigit() and 0 <= r[0] and r[1] < int(d))
            ]
            if checks:
                cond = " and ".join(f"0 <= {i} < {d}" for i, d in checks)
                args = [self.use(v) for v in op.operands]
                ok_check = ok and all(d.isdigit() for _, d in checks)
                checked = [i for i, _ in checks] if reads is None else reads
                self.check(indent, cond, op, args, checked, ok_check)
            reads = list(indices if reads is None else reads)
            if len(terms) == 1 and terms[0] in self.locals:
                off = terms[0]
            else:
                off = self.fresh("o")
                expr = " + ".join(terms) if terms else "0"
                self.py(indent, f"{off} = {expr}", [*reads, *info.strides, info.start], [off],
                        ok)  # fmt: skip
            self.offsets[-1][key] = off
        if info.base is not None and not is_ideal_tape(op):  # a free tape access: no record
            sid = self.cm.new_sid(op)
            low = (sid << SID_SHIFT) | (1 if write else 0)
            col = self.stream
            if col is not None and col.ok:
                self.stream_site(col, op, memval, info, low)
            self.access(indent, f"{info.base} + {off} * {info.esize << OFF_SHIFT} + {low}",
                        [info.base, off])  # fmt: skip
        return info, off

    def access(self, indent: int, expr: str, reads: Sequence[str], kind: str = "access") -> None:
        """Records encoded access `expr` (`Trace`)."""
        self.emit(indent, f"_A({expr})", kind, reads, (), expr)
        self.has_access = True

    def check(self, indent: int, cond: str, op: Operation, args: Sequence[str],
              reads: Sequence[str], ok: bool = True) -> None:  # fmt: skip
        """If `cond` fails, the interpreter's implementation of `op` on `args` reports it."""
        text = f"if not ({cond}): _RUN({self.cm.const(op)}, ({', '.join(args)},))"
        k = self.cm.const_id(op)
        self.emit(indent, text, "check" if ok else "", [*reads, *args], (), cond, k, tuple(args),
                  self.local(reads), self.local(args))  # fmt: skip

    def stream_site(
        self, col: Stream, op: Operation, memval: SSAValue, info: MemInfo, low: int
    ) -> None:
        """Records the access about to be emitted as an affine stream site, if it is one."""
        indices = list(op.operands[2:] if isinstance(op, memref.StoreOp) else op.operands[1:])
        forms = [col.affine(v, self.names) for v in indices]
        if (
            memval in col.inside
            or not isinstance(op, memref.LoadOp | memref.StoreOp)
            or any(f is None for f in forms)
            or not all(s.isdigit() for s in info.strides)
            or info.start
        ):
            col.ok = False
            return
        esize = info.esize << OFF_SHIFT
        a = " + ".join(f"{f[0]} * {s}" for f, s in zip(forms, info.strides) if f) or "0"  # type: ignore[index]
        b = sum(f[1] * int(s) for f, s in zip(forms, info.strides) if f)  # type: ignore[index]
        col.sites.append((f"{info.base} + ({a}) * {esize} + {low}", b * esize))
        col.lines.add(len(self.lines))

    # -- blocks ----------------------------------------------------------------------------
    def segment(self, indent: int) -> list[Operation]:
        k, ops = self.cm.new_segment()
        self.emit(indent, f"if _BC[{k}]: _BC[{k}] += 1", "count", (), (), k, "1")
        self.emit(indent, f"else: _FIRST({k})", "first")
        self.emit(indent, f"_WN[0] += @@C{k}@@", "wn", (), (), f"@@C{k}@@")
        return ops

    def block(
        self,
        block: Block,
        indent: int,
        args: Sequence[str] | None = None,
        counted: list[Operation] | None = None,
    ) -> list[str]:
        """Emit `block`'s ops; returns the names of the terminator's operands.

        `counted`: the block is one segment whose counter the caller maintains (a loop
        body counted in bulk, see `simple_body`)."""
        if args is not None:
            for a, name in zip(block.args, args, strict=True):
                self.names[a] = name
        for a in block.args:
            if a in self.names and not isinstance(a.type, IndexType):
                self.bind(a, indent, block.parent_op() or self.fn)
        seg = counted if counted is not None else self.segment(indent)
        self.offsets.append({})
        yielded: list[str] = []
        last = block.last_op
        for op in block.ops:
            seg.append(op)
            self.cm.segment_of[op] = len(self.cm.segments) - 1
            if op is last and op.has_trait(_IsTerminator):
                yielded = self.terminator(op, indent)
            else:
                self.op(op, indent)
                if isinstance(op, _NESTING) and op is not last:
                    seg = self.segment(indent)
        self.offsets.pop()
        return yielded

    def terminator(self, op: Operation, indent: int) -> list[str]:
        if isinstance(op, func.ReturnOp):
            vals = [self.use(v) for v in op.operands]
            self.emit(indent, f"return ({', '.join(vals)}{',' if vals else ''})")
            return []
        if isinstance(op, scf.YieldOp | affine.YieldOp | scf.ConditionOp):
            return [self.use(v) for v in op.operands]
        raise UnsupportedOpError(op)

    def assign(self, indent: int, targets: Sequence[str], sources: Sequence[str]) -> None:
        pairs = [(t, s) for t, s in zip(targets, sources, strict=True) if t != s]
        if pairs:
            lhs, rhs = ", ".join(t for t, _ in pairs), ", ".join(s for _, s in pairs)
            self.py(indent, f"{lhs} = {rhs}", [s for _, s in pairs], [t for t, _ in pairs])

    def loop_header(self, indent: int, body: Block, bounds: Sequence[str], iv: str,
                    reads: Sequence[str], ok: bool) -> list[Operation] | None:  # fmt: skip
        """`for iv in range(*bounds):` (`reads`: the locals `bounds` read; `ok`: a kernel
        may take them); a simple body (one segment, no events) is counted in bulk
        before the loop (its ops get their PCs there, as they would at its first
        iteration), and gets no flush check. Returns that segment's op list."""
        rng = f"range({', '.join(bounds)})"
        if not simple_body(body):
            self.py(indent, f"for {iv} in {rng}:", reads, [iv], ok)
            return None
        k, ops = self.cm.new_segment()
        r, n, s = self.fresh("r"), self.fresh("n"), self.fresh("s")
        self.emit(indent, f"{r} = {rng}; {n} = len({r})", "range" if ok else "", reads, (r, n),
                  *bounds)  # fmt: skip
        self.py(indent, f"if {n}:", [n])
        self.emit(indent + 1, f"if _BC[{k}]: _BC[{k}] += {n}", "count", [n], (), k, n)
        self.emit(indent + 1, f"else: _FIRST({k}); _BC[{k}] += {n} - 1", "first")
        self.emit(indent + 1, f"_WN[0] += {n} * @@C{k}@@", "wn", [n], (), f"{n} * @@C{k}@@")
        self.emit(indent + 1, f"{s} = _WSTART({k}, {r}) if _WN[0] - _WN[1] >= _WIN else None",
                  "wstart", [r, n], [s], k, r, n)  # fmt: skip
        self.emit(indent, f"for {iv} in {r}:", "for", [r], [iv], r)
        self.bulk_end = St(f"if {iv} == {s}: {s} = _WBULK({k}, {r}, {iv})", "wbulk",
                           (iv, s, r, n), (s,), (k, r, n))  # fmt: skip
        self.bulk_names = (k, r, n, s)
        return ops

    def loop_end(self, indent: int, counted: list[Operation] | None) -> None:
        """At the end of a loop body: the phase-window check (hwmodel/timing/phases.py)."""
        if counted is not None:
            self.lines.append((indent, self.bulk_end))
        else:
            self.emit(indent, "if _WN[0] - _WN[1] >= _WIN: _WEND()", "wend")

    # -- ops -------------------------------------------------------------------------------
    def op(self, op: Operation, indent: int) -> None:
        gen = EMITTERS.get(op.name)
        if gen is not None:
            gen(self, op, indent)
            return
        self.fallback(op, indent)

    def fallback(self, op: Operation, indent: int) -> None:
        """An op without an inline translation: call the interpreter's implementation.

        Only for ops on scalars (no regions, no memory): they have no effect the hardware
        model charges beyond their op class, and their value is the interpreter's."""
        if op.regions:
            raise UnsupportedOpError(op)
        for v in (*op.operands, *op.results):
            if int_width(v.type) is None and not isinstance(v.type, builtin.AnyFloat):
                raise UnsupportedOpError(op)
        if not self.cm.has_impl(op):
            raise UnsupportedOpError(op)
        k = self.cm.const(op)
        args = [self.use(v) for v in op.operands]
        res = [self.define(r) for r in op.results]
        call = f"_RUN({k}, ({', '.join(args)}{',' if args else ''}))"
        if res:
            self.emit(indent, f"{', '.join(res)}, = {call}")
        else:
            self.emit(indent, call)

    def event(self, op: Operation, indent: int) -> None:
        """An op the interpreter runs (and the hardware model hears of) as an event."""
        k = self.cm.new_event(op)
        args = [self.use(v) for v in op.operands]
        res = [self.define(r) for r in op.results]
        call = f"_EVENT({k}, ({', '.join(args)}{',' if args else ''}))"
        if res:
            self.emit(indent, f"{', '.join(res)}, = {call}")
        else:
            self.emit(indent, call)
        for r in op.results:
            self.bind(r, indent, op)

    def compile(self) -> str:
        fname = self.cm.py_name(self.fn.sym_name.data)
        if len(self.fn.body.blocks) > 1:
            raise UnsupportedOpError(self.fn, "fast path: unstructured control flow (cf)")
        entry = self.fn.body.blocks[0]
        params = [self.define(a) for a in entry.args]
        self.lines = []
        self.emit(1, f"def {fname}({', '.join(params)}):")
        self.block(entry, 2, params)
        return "\n".join("    " * d + st.text for d, st in self.lines)


# Op emitters. Each takes (compiler, op, indent).

Emitter = Callable[[FunctionCompiler, Operation, int], None]
EMITTERS: dict[str, Emitter] = {}


def emitter(*names: str) -> Callable[[Emitter], Emitter]:
    def deco(fn: Emitter) -> Emitter:
        for n in names:
            EMITTERS[n] = fn
        return fn

    return deco


class ModuleCompiler:
    """Every `func.func` of `module` compiled to the Python source of one factory
    (`source`: `_factory(runtime)` returns the functions by name), and the static tables
    the generated code indexes; `tapeflow.hwmodel.compiled.module.CompiledModule` runs it.
    The op emitters (scalars, loops, memory) register themselves in `EMITTERS` on import.

    Static tables (indexed by what the generated code records):
    - `segments[k]`: the ops of straight-line segment `k` (a block, cut after every op
      with regions and every call); its counter counts its executions.
    - `mem_ops[sid]`: the op of each recorded memory access site, and `sids_of[op]`
      its `(sid, pc delta)` pairs (memref.copy has two: source and destination).
    - `event_ops[k]`: the ops run as events (allocation, DMA...).
    """

    def __init__(self, module: ModuleOp):
        self.module = module
        self.segments: list[list[Operation]] = []
        self.segment_of: dict[Operation, int] = {}
        self.mem_ops: list[Operation] = []
        self.sids_of: dict[Operation, list[tuple[int, int]]] = {}
        self.event_ops: list[Operation] = []
        self.kernels: list[jit.LoopKernel] = []
        """numba kernels of loop nests (`tapeflow.hwmodel.jit`), by `_JNEST` index."""
        self.not_kernels: list[tuple[Operation, str]] = []
        """Loops that got no kernel, and why (what to extend next)."""
        self.consts: list[Any] = []
        self._const_ids: dict[int, int] = {}
        self.functions: dict[str, func.FuncOp] = {}
        for op in module.walk():  # nested modules too, as `runner.find_function`
            if isinstance(op, func.FuncOp):
                if op.sym_name.data in self.functions:
                    raise UnsupportedOpError(op, "fast path: a second function of this name")
                self.functions[op.sym_name.data] = op
        self._fallback_interp: Any = None
        parts: list[str] = ["def _factory(_RT):"]
        parts.append("    _BC = _RT.block_counts; _FIRST = _RT.first")
        parts.append("    _T = _RT.accesses; _A = _T.append; _LIM = _RT.batch_size")
        parts.append("    _FLUSH = _RT.flush; _EVENT = _RT.event; _view = _memref_view")
        parts.append("    _MID = _RT.memref_id; _RID = _RT.records_id; _TID = _RT.tape_id")
        parts.append("    _RUN = _RT.run_op; _POP_EMPTY = _RT.pop_empty")
        parts.append("    _FREE_NONEMPTY = _RT.free_nonempty; _COPY = _RT.copy")
        parts.append("    _RCHECK = _RT.record_check; _RNONE = _RT.record_unwritten")
        parts.append("    _WN = _RT.window; _WIN = _RT.window_ops; _WEND = _RT.window_end")
        parts.append("    _WSTART = _RT.window_start; _WBULK = _RT.window_bulk")
        parts.append("    _STREAM = _RT.stream; _SMIN = _RT.stream_min")
        parts.append("    _JNEST = _RT.jit_nest; _LAYOUT = _strided_layout")
        for fn in self.functions.values():
            if fn.body.blocks:
                try:
                    parts.append(FunctionCompiler(self, fn).compile())
                except RecursionError:
                    raise UnsupportedOpError(fn, "fast path: the function nests too deeply") from None
                except (UnsupportedOpError, InterpretationError):
                    raise
                except Exception as error:  # IR the compiler does not expect: not this path's
                    raise UnsupportedOpError(
                        fn, f"fast path: cannot compile ({type(error).__name__}: {error})"
                    ) from error
        names = ", ".join(
            f"{n!r}: {self.py_name(n)}" for n, f in self.functions.items() if f.body.blocks
        )
        parts.append(f"    return {{{names}}}")
        if len(self.mem_ops) > SID_LIMIT:
            raise UnsupportedOpError(self.mem_ops[SID_LIMIT], "fast path: too many memory ops")
        self.event_set = set(self.event_ops)
        self.seg_charged = [sum(1 for op in seg if is_charged(op)) for seg in self.segments]
        """Charged ops (every class but `free`) per segment execution: the phase window."""
        self.pc_span = {
            op: n for seg in self.segments for op in seg if (n := pc_count(op)) != 1
        }
        """PCs an op occupies when not one (`tapeflow.hwmodel.costs.pc_count`)."""
        source = "\n".join(parts) + "\n"
        charged = lambda m: str(self.seg_charged[int(m[1])])  # noqa: E731
        self.source = re.sub(r"@@C(\d+)@@", charged, source)
        for kernel in self.kernels:
            kernel.charge(self.seg_charged)
        self.floats = np.array([v if isinstance(v, float) else 0.0 for v in self.consts])
        """`_K` as a loop kernel sees it: its float constants (inf, nan)."""

    # -- compile-time helpers --------------------------------------------------------------
    def py_name(self, sym: str) -> str:
        return "f_" + "".join(ch if ch.isalnum() else "_" for ch in sym) + f"_{len(sym)}"

    def new_segment(self) -> tuple[int, list[Operation]]:
        ops: list[Operation] = []
        self.segments.append(ops)
        return len(self.segments) - 1, ops

    def new_sid(self, op: Operation, pc_delta: int = 0) -> int:
        self.mem_ops.append(op)
        sid = len(self.mem_ops) - 1
        self.sids_of.setdefault(op, []).append((sid, pc_delta))
        return sid

    def new_event(self, op: Operation) -> int:
        self.event_ops.append(op)
        return len(self.event_ops) - 1

    def const(self, value: Any) -> str:
        """A compile-time object made available to the generated code as `_K[i]`."""
        return f"_K[{self.const_id(value)}]"

    def const_id(self, value: Any) -> int:
        key = id(value)
        if key not in self._const_ids:
            self._const_ids[key] = len(self.consts)
            self.consts.append(value)
        return self._const_ids[key]

    def has_impl(self, op: Operation) -> bool:
        interp = self.fallback_interpreter()
        return type(op) in interp._impls._impl_dict  # pyright: ignore[reportPrivateUsage]

    def fallback_interpreter(self) -> Any:
        if self._fallback_interp is None:
            from tapeflow.interpreters import make_interpreter

            self._fallback_interp = make_interpreter(self.module)
        return self._fallback_interp

    def run_op(self, op: Operation, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The interpreter's own implementation of `op` (no listeners); its errors are
        reported as the op-by-op run reports them (`interpreters.runtime_error`)."""
        try:
            return self.fallback_interpreter().run_op(op, args)
        except (RecursionError, FastPathLimit):
            raise
        except Exception as error:
            raise runtime_error(error, [op]) from error
