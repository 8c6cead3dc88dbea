"""`enzyme-import-tape`: Enzyme-MLIR's tape as TapeFlow's, so TapeFlow's passes reorganise
the tape real Enzyme built (the paper's setting).

Each `enzyme.init` becomes one `tape.init` of the same element type (one cache each), its
pushes and pops `tape.push`/`tape.pop`; `enzyme.store`/`enzyme.load` (accesses to the cache
buffers Enzyme sized itself) become `memref.store`/`memref.load`, their sizes being the
buffer's own. Nothing else changes, so the gradient is Enzyme's, bit for bit.

A cache of memrefs keeps a reference, not the data: Enzyme pushes the same buffer (an
argument, or a buffer it allocated before the loop) at every iteration. When every push
of such a cache pushes one value that is defined in the function's entry block before the
first pop, each pop returns that value: the pops are replaced by it and the cache
disappears, so no reference is stored on the tape (TapeFlow's records hold scalars). A
cache of memrefs that is not of that form stays a `tape.cache` and TapeFlow's region
pass refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tapeflow.dialects import enzyme, tape


def _tape_twin(op: Operation) -> Operation | None:
    """The `tape`/`memref` op that does what the `enzyme` op `op` does (None: not one)."""
    if isinstance(op, enzyme.InitOp):
        return tape.InitOp(op.cache.type.element_type)
    if isinstance(op, enzyme.PushOp):
        return tape.PushOp(op.cache, op.value)
    if isinstance(op, enzyme.PopOp):
        return tape.PopOp(op.cache)
    if isinstance(op, enzyme.StoreOp):
        return memref.StoreOp.get(op.value, op.memref, op.indices)
    if isinstance(op, enzyme.LoadOp):
        return memref.LoadOp.get(op.memref, op.indices)
    return None


def _entry_position(op: Operation, entry: Block) -> Operation | None:
    """The ancestor of `op` in `entry` (None if `op` is not inside `entry`)."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not entry:
        current = current.parent_op()
    return current


def _forward_references(init: enzyme.InitOp) -> bool:
    """Replaces the pops of a cache of memrefs by the one buffer every push pushes, when
    that buffer is defined before the first pop in the function's entry block."""
    if not isinstance(init.cache.type.element_type, MemRefType):
        return False
    users = [use.operation for use in init.cache.uses]
    pushes = [u for u in users if isinstance(u, enzyme.PushOp)]
    pops = [u for u in users if isinstance(u, enzyme.PopOp)]
    if len(pushes) + len(pops) != len(users) or not pushes:
        return False
    values = {push.value for push in pushes}
    if len(values) != 1:
        return False
    (value,) = values
    function = init.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    if function is None:
        return False
    entry = function.body.blocks[0]
    if isinstance(value, BlockArgument):
        defined = value.block is entry
        after = None
    else:
        after = value.owner
        defined = isinstance(after, Operation) and after.parent_block() is entry
    if not defined:
        return False
    first = entry.get_operation_index(after) if after is not None else -1
    for pop in pops:
        at = _entry_position(pop, entry)
        if at is None or entry.get_operation_index(at) <= first:
            return False
    for pop in pops:
        pop.results[0].replace_all_uses_with(value)
        pop.detach()
        pop.erase()
    for push in pushes:
        push.detach()
        push.erase()
    init.detach()
    init.erase()
    return True


def import_enzyme_tape(module: ModuleOp) -> None:
    """Rewrites every `enzyme` op of `module` into TapeFlow's `tape` and `memref` ops."""
    for init in [op for op in module.walk() if isinstance(op, enzyme.InitOp)]:
        _forward_references(init)
    # In program order, so each cache is a tape.cache before its pushes and pops are
    # rewritten; nothing else is touched (no pattern walker: it would also erase dead ops).
    for op in list(module.walk()):
        twin = _tape_twin(op)
        if twin is not None:
            twin.location = op.location
            Rewriter.replace_op(op, twin)


@dataclass(frozen=True)
class ImportEnzymeTapePass(ModulePass):
    """Enzyme-MLIR's caches as `tape` caches (one each), its cache buffers as memrefs."""

    name = "enzyme-import-tape"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        import_enzyme_tape(op)
