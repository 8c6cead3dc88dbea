"""Tape caches shared across calls: Enzyme's growable stacks, passed by reference.

`tapeflow-autodiff` keeps the calls of recursive functions (`autodiff/calls.py`): their
caches are created by the outermost caller and passed to every `@g_aug`/`@g_rev` as
`!tape.cache<T>` arguments, each call pushing or popping a number of values known only
as it runs. Such a cache is lowered to Enzyme's growable stack (`lower_tape`'s rule 4):
the `{elements, size, capacity}` triple (`memref<memref<?xT>>`, `memref<index>`,
`memref<index>`), whose three memrefs replace the cache in every function signature and
call, so the callee grows the caller's stack in place.
"""

from __future__ import annotations

from xdsl.dialects import builtin, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, IndexType, MemRefType
from xdsl.ir import BlockArgument, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tapeflow.dialects import tape
from tapeflow.transforms.builder import At, alloc_growable, pop_index, push_growable

Triple = tuple[SSAValue, SSAValue, SSAValue]


def is_shared(cache: SSAValue) -> bool:
    """A cache passed to a call or received as an argument (Enzyme's layout, kept)."""
    return isinstance(cache, BlockArgument) or any(
        isinstance(u.operation, func.CallOp) for u in cache.uses
    )


def lower_shared_caches(
    module: builtin.ModuleOp, initial: int, assert_pops: bool, role: str | None,
    data_role: str | None, meta_role: str | None,
) -> None:
    """Lowers every shared cache of `module` (module docstring)."""
    triples: dict[SSAValue, Triple] = {}
    for fn in [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]:
        entry = fn.body.block
        for arg in [a for a in entry.args if isinstance(a.type, tape.CacheType)]:
            element = arg.type.element_type
            slot_t = MemRefType(MemRefType(element, [DYNAMIC_INDEX]), [])
            index_t = MemRefType(IndexType(), [])
            at = arg.index
            triples[arg] = tuple(  # type: ignore[assignment]
                entry.insert_arg(t, at + k) for k, t in enumerate((slot_t, index_t, index_t))
            )
    for init in [o for o in module.walk() if isinstance(o, tape.InitOp)]:
        if is_shared(init.cache):
            at = At(InsertPoint.before(init), data_role)
            element = init.cache.type.element_type
            triples[init.cache] = alloc_growable(at, element, initial, meta_role)
    for cache, (slot, size, capacity) in triples.items():
        element = cache.type.element_type  # type: ignore[union-attr]
        for use in list(cache.uses):
            user = use.operation
            at = At(InsertPoint.before(user), data_role)
            if isinstance(user, tape.PushOp):
                push_growable(at, user.value, slot, size, capacity, element, role)
            elif isinstance(user, tape.PopOp):
                top = pop_index(at, size, user, assert_pops)
                value = at.load(at.load(slot), [top], role)
                value.owner.location = user.location  # type: ignore[union-attr]
                user.value.replace_all_uses_with(value)
            elif isinstance(user, tape.FreeOp):
                at.op(memref.DeallocOp.get(at.load(slot)))
                for ref in (slot, size, capacity):
                    at.op(memref.DeallocOp.get(ref))
            else:
                continue
            Rewriter.erase_op(user)
    for call in [o for o in module.walk() if isinstance(o, func.CallOp)]:
        if any(v in triples for v in call.arguments):
            operands = [x for v in call.arguments for x in triples.get(v, (v,))]
            new = func.CallOp(call.callee, operands, list(call.result_types))
            new.location = call.location
            new.attributes.update(call.attributes)
            Rewriter.replace_op(call, new)
    for cache in triples:
        if isinstance(cache, BlockArgument):
            cache.block.erase_arg(cache)
        else:
            Rewriter.erase_op(cache.owner)  # type: ignore[arg-type]
    for fn in module.ops:
        if isinstance(fn, func.FuncOp) and fn.body.blocks:
            inputs = [a.type for a in fn.body.block.args]
            if list(fn.function_type.inputs.data) != inputs:
                fn.function_type = FunctionType.from_lists(
                    inputs, list(fn.function_type.outputs.data)
                )
