"""`tapeflow-lower-to-std`: lowers TapeFlow's own dialects to upstream MLIR dialects only.

After this pass a module uses nothing but `builtin`, `func`, `scf`, `cf`, `arith`, `math`,
`memref` (and `affine` when the input had it), so upstream `mlir-opt` accepts it and can
take it to LLVM. Every lowering keeps the program's meaning; what the interpreter checks
at run time becomes a `cf.assert` where it is cheap.

`tape` (Enzyme's caches), as Enzyme's `convert-enzyme-to-memref` does it:
- `tape.init` -> three buffers: `memref<memref<?xT>>` holding the elements buffer,
  `memref<index>` for the size and `memref<index>` for the capacity (the `capacity` hint,
  else 16);
- `tape.push` -> doubles the capacity when full (new buffer, copy loop, dealloc of the old
  one), then stores at `size` and increments it;
- `tape.pop` -> `cf.assert size > 0 "pop on empty cache"`, decrements and loads;
- `tape.free` -> `cf.assert size == 0`, then deallocates the three buffers.

`region` (record tapes) become a struct of arrays, one buffer per record field indexed by
the record index: `!region.tape<!region.record<f64, i1>>` of `n` records is a
`memref<?xf64>` plus a `memref<?xi1>` (always a dynamic size, so that `arith.select`
between two buffers of one record type, as `tapeflow-stream` emits, stays well typed). A scratchpad
tape (`#stream.spm`) is an ordinary buffer of the same shape. `region.write`/`region.read`
become one store/load per field; reading a record never written is not checked natively.
A growable tape (`tapeflow.growable`) keeps each field buffer in a slot
(`memref<memref<?xT>>`, as a growable cache does) with one capacity cell; `region.reserve`
replaces every field buffer by one of `max(2 x capacity, count)` records (alloc, copy loop,
dealloc of the old one) when the capacity is below `count`.

`stream`: a FIFO of m tiles of K records is one `memref<?xKxT>` per field; commit
and prefetch become copy loops between a tile slot and the buffer (over the DMA's record
count when it has one), done eagerly when the
DMA starts (the buffer may not be touched until the matching acquire, so the values are
the same); acquires, release, wait and tokens vanish. `memref<..., #stream.spm>` loses
its memory space: the scratchpad becomes ordinary memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, builtin, cf, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriteWalker,
    TypeConversionPattern,
    attr_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.transforms.builder import At, alloc_growable, pop_index, push_growable

DEFAULT_TAPE_CAPACITY = 16
"""Initial capacity, in elements, of a lowered `tape.cache` with no capacity hint."""

UPSTREAM_DIALECTS = frozenset(
    {"builtin", "func", "scf", "cf", "arith", "math", "memref", "affine", "llvm"}
)
"""Dialects an upstream `mlir-opt` knows and the native pipeline lowers."""


def _block_builder(block: Block) -> At:
    return At(InsertPoint.at_end(block))


def _for(at: At, lb: SSAValue, ub: SSAValue, body: Callable[[At, SSAValue], None]) -> None:
    block = Block(arg_types=[IndexType()])
    body(_block_builder(block), block.args[0])
    block.add_op(scf.YieldOp())
    at.op(scf.ForOp(lb, ub, at.index(1), [], block))


# --------------------------------------------------------------------------------------
# tape


@dataclass(frozen=True)
class _LoweredCache:
    slot: SSAValue
    """memref<memref<?xT>>: the current elements buffer."""
    size: SSAValue
    """memref<index>: number of values on the stack."""
    capacity: SSAValue
    """memref<index>: length of the elements buffer."""
    element: Attribute


def _lower_tape_init(op: Operation) -> _LoweredCache:
    from tapeflow.dialects import tape

    assert isinstance(op, tape.InitOp)
    element = op.cache.type.element_type  # type: ignore[attr-defined]
    hint = op.capacity.value.data if op.capacity is not None else DEFAULT_TAPE_CAPACITY
    at = At(InsertPoint.before(op))
    slot, size, capacity = alloc_growable(at, element, max(hint, 1))
    return _LoweredCache(slot, size, capacity, element)


def _lower_tape_push(op: Operation, cache: _LoweredCache) -> None:
    from tapeflow.dialects import tape

    assert isinstance(op, tape.PushOp)
    at = At(InsertPoint.before(op))
    push_growable(at, op.value, cache.slot, cache.size, cache.capacity, cache.element)
    Rewriter.erase_op(op)


def _lower_tape_pop(op: Operation, cache: _LoweredCache) -> None:
    from tapeflow.dialects import tape

    assert isinstance(op, tape.PopOp)
    at = At(InsertPoint.before(op))
    top = pop_index(at, cache.size, op, check=True)
    value = at.load(at.load(cache.slot), [top])
    op.value.replace_all_uses_with(value)
    Rewriter.erase_op(op)


def _lower_tape_free(op: Operation, cache: _LoweredCache) -> None:
    at = At(InsertPoint.before(op))
    n = at.load(cache.size)
    empty = at.val(arith.CmpiOp(n, at.index(0), "eq"))
    at.op(cf.AssertOp(empty, op_error(op, "cache freed with value(s) never popped")))
    at.op(memref.DeallocOp.get(at.load(cache.slot)))
    for ref in (cache.slot, cache.size, cache.capacity):
        at.op(memref.DeallocOp.get(ref))
    Rewriter.erase_op(op)


def lower_tape(module: ModuleOp) -> None:
    """Lowers every `tape.*` op of `module` (see the module docstring)."""
    from tapeflow.dialects import tape
    from tapeflow.transforms.lower_split_tape import lower_split_tapes
    from tapeflow.transforms.shared_tape import lower_shared_caches

    lower_split_tapes(module, (None, None), True, None)
    # The caches of recursive functions, passed to calls: the same stacks, by reference.
    lower_shared_caches(module, DEFAULT_TAPE_CAPACITY, True, None, None, None)
    inits = [op for op in module.walk() if isinstance(op, tape.InitOp)]
    for init in inits:
        users = [use.operation for use in init.cache.uses]
        for user in users:
            if not isinstance(user, tape.PushOp | tape.PopOp | tape.FreeOp) or (
                isinstance(user, tape.PushOp) and user.value is init.cache
            ):
                raise PassFailedException(
                    op_error(
                        user,
                        "uses a tape.cache in a way tapeflow-lower-to-std cannot "
                        "lower (only tape.push/pop/free of a tape.init result are)",
                    )
                )
        lowered = _lower_tape_init(init)
        for user in users:
            if isinstance(user, tape.PushOp):
                _lower_tape_push(user, lowered)
            elif isinstance(user, tape.PopOp):
                _lower_tape_pop(user, lowered)
            else:
                _lower_tape_free(user, lowered)
        Rewriter.erase_op(init)
    for op in module.walk():
        if op.dialect_name() == "tape":
            raise PassFailedException(
                op_error(op, "has a tape.cache operand not produced by tape.init")
            )


# --------------------------------------------------------------------------------------
# the pass


def check_upstream_only(module: ModuleOp) -> None:
    """Raises if an op or a type outside the upstream dialects is left in `module`."""
    for op in module.walk():
        if op.dialect_name() not in UPSTREAM_DIALECTS:
            raise PassFailedException(
                op_error(op, "is not in an upstream dialect after tapeflow-lower-to-std")
            )
        for value in (*op.operands, *op.results):
            _check_type(op, value.type)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    _check_type(op, arg.type)


def _check_type(op: Operation, typ: Attribute) -> None:
    while isinstance(typ, MemRefType):
        if not isinstance(typ.memory_space, NoneAttr | IntegerAttr):
            raise PassFailedException(
                op_error(op, f"uses memory space {typ.memory_space}, unknown upstream")
            )
        typ = typ.element_type
    if typ.name.split(".")[0] in ("tape", "region", "stream"):
        raise PassFailedException(
            op_error(op, f"uses the type {typ}, left by tapeflow-lower-to-std")
        )


@dataclass(frozen=True)
class LowerToStdPass(ModulePass):
    """Lowers tape, region and stream ops to upstream dialects (memref, scf, arith, cf)."""

    name = "tapeflow-lower-to-std"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from tapeflow.baselines.enzyme_tape import import_enzyme_tape

        import_enzyme_tape(op)  # Enzyme-MLIR's caches (enzyme-autodiff) are tape caches
        lower_stream_and_regions(op)
        lower_tape(op)
        check_upstream_only(op)


# --------------------------------------------------------------------------------------
# region and stream


def _field_buffers(
    at: At, fields: Sequence[Attribute], shape: Sequence[int], dynamic: Sequence[SSAValue]
) -> list[SSAValue]:
    return [at.alloc(field, shape, dynamic) for field in fields]


def _count_shape(
    at: At, static: int | None, dynamic: SSAValue | None
) -> tuple[list[int], list[SSAValue]]:
    """Always a dynamic size, so every buffer of one record type has one memref type (the
    stream pass selects between double buffers with `arith.select`)."""
    if static is not None:
        return [DYNAMIC_INDEX], [at.index(static)]
    assert dynamic is not None
    return [DYNAMIC_INDEX], [dynamic]


def _ours_type(typ: Attribute) -> bool:
    return typ.name.split(".")[0] in ("region", "stream")


def _is_ours(op: Operation) -> bool:
    """Region and stream ops, and `arith.select`s between record tapes, FIFOs or tokens
    (the double buffering of `tapeflow-stream`)."""
    if op.dialect_name() in ("region", "stream"):
        return True
    return isinstance(op, arith.SelectOp) and _ours_type(op.result.type)


class _RegionStreamLowering:
    """Maps every record tape and FIFO to its field buffers, then rewrites their users.

    - `!region.tape<R[, #stream.spm]>` of n records -> one `memref<?xT_i>` per field;
    - `!stream.fifo<R, K>` of m tiles -> one `memref<?xKxT_i>` per field;
    - `arith.select` between two tapes (FIFOs) -> one select per field buffer;
    - `stream.commit %buf -> %f[%t]` -> a loop copying the K records of every field of
      `%buf` into `f_i[%t, k]`, done at once (the buffer may not change until it is
      acquired again, so an eager copy reads the same values); `stream.prefetch` is the
      copy the other way (the slot holds a completed commit);
    - acquires, `stream.release`, `stream.wait` and the tokens vanish.
    """

    def __init__(self) -> None:
        self.buffers: dict[SSAValue, list[SSAValue]] = {}
        self.tile: dict[SSAValue, int] = {}
        self.growable: dict[SSAValue, tuple[list[SSAValue], SSAValue]] = {}
        """A growable tape's slots (`memref<memref<?xT_i>>`, one per field) and capacity."""

    def fields_of(self, op: Operation, value: SSAValue) -> list[SSAValue]:
        if value in self.growable:  # the current buffers, loaded where `op` uses them
            at = At(InsertPoint.before(op))
            return [at.load(slot) for slot in self.growable[value][0]]
        if value not in self.buffers:
            raise PassFailedException(
                op_error(
                    op,
                    "uses a record tape or FIFO that tapeflow-lower-to-std cannot "
                    "trace to its region.alloc / stream.fifo_alloc",
                )
            )
        return self.buffers[value]

    def run(self, module: ModuleOp) -> None:
        from tapeflow.dialects import region, stream

        ours = [op for op in module.walk() if _is_ours(op)]
        for op in ours:
            self._check_uses(op)
            at = At(InsertPoint.before(op))
            if isinstance(op, region.AllocOp):
                shape, dynamic = _count_shape(at, op.static_count, op.dynamic_count)
                record = op.tape.type.record  # type: ignore[attr-defined]
                buffers = _field_buffers(at, record.field_types, shape, dynamic)
                if op.growable:
                    self.growable[op.tape] = _slots(at, buffers, dynamic[0])
                else:
                    self.buffers[op.tape] = buffers
            elif isinstance(op, region.ReserveOp | stream.FifoReserveOp):
                slots, capacity = self.growable[op.operands[0]]
                _reserve(at, slots, capacity, op.operands[1], self.tile.get(op.operands[0]))
            elif isinstance(op, stream.FifoAllocOp):
                fifo_type = op.fifo.type
                assert isinstance(fifo_type, stream.FifoType)
                static = None if op.num_tiles is None else op.num_tiles.value.data
                shape, dynamic = _count_shape(at, static, op.dynamic_num_tiles)
                buffers = _field_buffers(
                    at, fifo_type.record.field_types, [*shape, fifo_type.k], dynamic
                )
                if any(isinstance(u.operation, stream.FifoReserveOp) for u in op.fifo.uses):
                    self.growable[op.fifo] = _slots(at, buffers, dynamic[0])
                else:
                    self.buffers[op.fifo] = buffers
                self.tile[op.fifo] = fifo_type.k
            elif isinstance(op, arith.SelectOp):
                if _ours_type(op.result.type) and not isinstance(op.result.type, stream.TokenType):
                    self.buffers[op.result] = [
                        at.val(arith.SelectOp(op.cond, t, f))
                        for t, f in zip(
                            self.fields_of(op, op.lhs), self.fields_of(op, op.rhs), strict=True
                        )
                    ]
                    if op.lhs in self.tile:
                        self.tile[op.result] = self.tile[op.lhs]
            elif isinstance(op, region.WriteOp):
                for value, ref in zip(op.values, self.fields_of(op, op.tape)):
                    at.store(value, ref, [op.index])
            elif isinstance(op, region.ReadOp):
                refs = self.fields_of(op, op.tape)
                for result, ref in zip(op.values, refs):
                    result.replace_all_uses_with(at.load(ref, [op.index]))
            elif isinstance(op, region.DeallocOp | stream.FifoDeallocOp):
                operand = op.operands[0]
                for ref in self.fields_of(op, operand):
                    at.op(memref.DeallocOp.get(ref))
                if operand in self.growable:
                    slots, capacity = self.growable[operand]
                    for ref in [*slots, capacity]:
                        at.op(memref.DeallocOp.get(ref))
            elif isinstance(op, stream.CommitOp | stream.PrefetchOp):
                self._copy(at, op, to_fifo=isinstance(op, stream.CommitOp))
            elif not isinstance(
                op, stream.AcquireWriteOp | stream.AcquireReadOp | stream.ReleaseOp | stream.WaitOp
            ):
                raise PassFailedException(op_error(op, "has no lowering to upstream dialects"))
        for op in reversed(ours):
            Rewriter.erase_op(op)

    def _copy(self, at: At, op: Operation, to_fifo: bool) -> None:
        fifo, tile, buffer = op.operands[:3]
        records = op.operands[3] if len(op.operands) > 3 else None
        fifo_refs = self.fields_of(op, fifo)
        buffer_refs = self.fields_of(op, buffer)

        def body(b: At, k: SSAValue) -> None:
            for fifo_ref, buffer_ref in zip(fifo_refs, buffer_refs):
                if to_fifo:
                    b.store(b.load(buffer_ref, [k]), fifo_ref, [tile, k])
                else:
                    b.store(b.load(fifo_ref, [tile, k]), buffer_ref, [k])

        # A partial tile (the DMA's record count) copies only its filled part.
        _for(at, at.index(0), records if records is not None else at.index(self.tile[fifo]), body)

    @staticmethod
    def _check_uses(op: Operation) -> None:
        for result in op.results:
            if not _ours_type(result.type):
                continue
            for use in result.uses:
                user = use.operation
                if not _is_ours(user):
                    raise PassFailedException(
                        op_error(
                            user,
                            f"uses the result of '{op.name}', which "
                            "tapeflow-lower-to-std cannot lower outside region/stream ops",
                        )
                    )


def _slots(at: At, buffers: list[SSAValue], count: SSAValue) -> tuple[list[SSAValue], SSAValue]:
    """A growable tape's field `buffers` of `count` records, each held in a slot, and its
    capacity cell (Enzyme's growable cache, one per field, one capacity)."""
    slots = []
    for buffer in buffers:
        slots.append(at.alloc(buffer.type, []))
        at.store(buffer, slots[-1])
    capacity = at.alloc(IndexType(), [])
    at.store(count, capacity)
    return slots, capacity


def _reserve(
    at: At, slots: list[SSAValue], capacity: SSAValue, count: SSAValue, tile: int | None
) -> None:
    """`region.reserve` (`stream.fifo_reserve`): when the capacity is below `count`, every
    field buffer is replaced by one of `max(2 x capacity, count)` records (tiles of `tile`
    records) holding the same records (tiles)."""
    cap = at.load(capacity)
    grow = Block()
    g = At(InsertPoint.at_end(grow))
    doubled = g.val(arith.MuliOp(cap, g.index(2)))
    size = g.val(arith.SelectOp(g.val(arith.CmpiOp(doubled, count, "sge")), doubled, count))
    shape = [DYNAMIC_INDEX] if tile is None else [DYNAMIC_INDEX, tile]
    for slot in slots:
        old = g.load(slot)
        new = g.alloc(old.type.element_type, shape, [size])  # type: ignore[attr-defined]

        def copy(b: At, k: SSAValue, old: SSAValue = old, new: SSAValue = new) -> None:
            if tile is None:
                b.store(b.load(old, [k]), new, [k])
            else:
                _for(b, b.index(0), b.index(tile),
                     lambda c, j: c.store(c.load(old, [k, j]), new, [k, j]))  # fmt: skip

        _for(g, g.index(0), cap, copy)
        g.op(memref.DeallocOp.get(old))
        g.store(new, slot)
    g.store(size, capacity)
    g.op(scf.YieldOp())
    at.op(scf.IfOp(at.val(arith.CmpiOp(count, cap, "sgt")), [], [grow]))


class _DropScratchpadSpace(TypeConversionPattern):
    """`memref<..., #stream.spm>` -> `memref<...>`: the scratchpad is ordinary memory."""

    recursive = True

    @attr_type_rewrite_pattern
    def convert_type(self, typ: MemRefType[Attribute]) -> Attribute | None:
        from tapeflow.dialects.stream import SpmAttr

        if isinstance(typ.memory_space, SpmAttr):
            return MemRefType(typ.element_type, typ.shape, typ.layout, NoneAttr())
        return None


def lower_stream_and_regions(module: ModuleOp) -> None:
    """Lowers `stream` and `region` ops, and drops the scratchpad memory space."""
    _RegionStreamLowering().run(module)
    PatternRewriteWalker(_DropScratchpadSpace()).rewrite_module(module)
