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
`memref<?xf64>` plus a `memref<?xi1>` (static shapes for a constant count). A scratchpad
tape (`#stream.spm`) is an ordinary buffer of the same shape. `region.write`/`region.read`
become one store/load per field; reading a record never written is not checked natively.

`stream` ops are lowered by `_StreamLowering` (scratchpad buffers become ordinary buffers,
DMA becomes copies, tokens and waits vanish).
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
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error

DEFAULT_TAPE_CAPACITY = 16
"""Initial capacity, in elements, of a lowered `tape.cache` with no capacity hint."""

UPSTREAM_DIALECTS = frozenset(
    {"builtin", "func", "scf", "cf", "arith", "math", "memref", "affine", "llvm"}
)
"""Dialects an upstream `mlir-opt` knows and the native pipeline lowers."""


class _At:
    """Inserts ops before a fixed point and returns their results."""

    def __init__(self, point: InsertPoint):
        self.point = point

    def op(self, op: Operation) -> Operation:
        Rewriter.insert_op(op, self.point)
        return op

    def val(self, op: Operation) -> SSAValue:
        return self.op(op).results[0]

    def index(self, value: int) -> SSAValue:
        return self.val(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def alloc(self, element: Attribute, shape: Sequence[int], dynamic: Sequence[SSAValue] = ()):
        return self.val(memref.AllocOp.get(element, shape=list(shape), dynamic_sizes=dynamic))

    def load(self, ref: SSAValue, indices: Sequence[SSAValue] = ()) -> SSAValue:
        return self.val(memref.LoadOp.get(ref, list(indices)))

    def store(self, value: SSAValue, ref: SSAValue, indices: Sequence[SSAValue] = ()) -> None:
        self.op(memref.StoreOp.get(value, ref, list(indices)))


def _block_builder(block: Block) -> _At:
    return _At(InsertPoint.at_end(block))


def _if_then(at: _At, cond: SSAValue, body: Callable[[_At], None]) -> None:
    then = Block()
    body(_block_builder(then))
    then.add_op(scf.YieldOp())
    at.op(scf.IfOp(cond, [], [then]))


def _for(at: _At, lb: SSAValue, ub: SSAValue, body: Callable[[_At, SSAValue], None]) -> None:
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
    at = _At(InsertPoint.before(op))
    buffer_type = MemRefType(element, [DYNAMIC_INDEX])
    slot = at.alloc(buffer_type, [])
    size = at.alloc(IndexType(), [])
    capacity = at.alloc(IndexType(), [])
    initial = at.index(max(hint, 1))
    buffer = at.alloc(element, [DYNAMIC_INDEX], [initial])
    at.store(buffer, slot)
    at.store(at.index(0), size)
    at.store(initial, capacity)
    return _LoweredCache(slot, size, capacity, element)


def _lower_tape_push(op: Operation, cache: _LoweredCache) -> None:
    from tapeflow.dialects import tape

    assert isinstance(op, tape.PushOp)
    at = _At(InsertPoint.before(op))
    n = at.load(cache.size)
    cap = at.load(cache.capacity)
    full = at.val(arith.CmpiOp(n, cap, "sge"))

    def grow(b: _At) -> None:
        new_cap = b.val(arith.MuliOp(cap, b.index(2)))
        old = b.load(cache.slot)
        new = b.alloc(cache.element, [DYNAMIC_INDEX], [new_cap])

        def copy(c: _At, i: SSAValue) -> None:
            c.store(c.load(old, [i]), new, [i])

        _for(b, b.index(0), n, copy)
        b.op(memref.DeallocOp.get(old))
        b.store(new, cache.slot)
        b.store(new_cap, cache.capacity)

    _if_then(at, full, grow)
    buffer = at.load(cache.slot)
    at.store(op.value, buffer, [n])
    at.store(at.val(arith.AddiOp(n, at.index(1))), cache.size)
    Rewriter.erase_op(op)


def _lower_tape_pop(op: Operation, cache: _LoweredCache) -> None:
    from tapeflow.dialects import tape

    assert isinstance(op, tape.PopOp)
    at = _At(InsertPoint.before(op))
    n = at.load(cache.size)
    ok = at.val(arith.CmpiOp(n, at.index(0), "sgt"))
    at.op(cf.AssertOp(ok, op_error(op, "pop on empty cache")))
    top = at.val(arith.SubiOp(n, at.index(1)))
    at.store(top, cache.size)
    value = at.load(at.load(cache.slot), [top])
    op.value.replace_all_uses_with(value)
    Rewriter.erase_op(op)


def _lower_tape_free(op: Operation, cache: _LoweredCache) -> None:
    at = _At(InsertPoint.before(op))
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

    inits = [op for op in module.walk() if isinstance(op, tape.InitOp)]
    for init in inits:
        users = [use.operation for use in init.cache.uses]
        for user in users:
            if not isinstance(user, tape.PushOp | tape.PopOp | tape.FreeOp) or (
                isinstance(user, tape.PushOp) and user.value is init.cache
            ):
                raise PassFailedException(
                    op_error(user, "uses a tape.cache in a way tapeflow-lower-to-std cannot "
                             "lower (only tape.push/pop/free of a tape.init result are)")
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
        lower_stream_and_regions(op)
        lower_tape(op)
        check_upstream_only(op)


def lower_stream_and_regions(module: ModuleOp) -> None:
    """Lowers `stream` then `region` ops (filled in as those dialects land)."""
    return None
