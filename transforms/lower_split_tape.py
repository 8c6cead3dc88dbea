"""Split mode's tape in the Enzyme layout: a `!tape.cache` that `@f_augment` returns and
`@f_reverse` takes (`autodiff/split.py`) becomes Enzyme's growable cache, its three
memrefs (the slot holding the elements buffer, the size, the capacity) on the tape in
its place. Pushes and pops are those of `tapeflow-lower-tape`'s rule 4: the values and
their order are unchanged, so the pair still gives `@f_grad`'s gradients bit for bit.
"""

from __future__ import annotations

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tapeflow.dialects import tape
from tapeflow.transforms.autodiff.split import TAPE_BYTES_ATTR
from tapeflow.transforms.builder import At, alloc_growable, pop_index, push_growable

DEFAULT_CAPACITY = 16


def _pairs(module: ModuleOp) -> list[tuple[func.FuncOp, func.FuncOp]]:
    fns = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    return [
        (f, fns[name.removesuffix("_augment") + "_reverse"])
        for name, f in fns.items()
        if TAPE_BYTES_ATTR in f.attributes and name.removesuffix("_augment") + "_reverse" in fns
    ]


def lower_split_tapes(module: ModuleOp, roles: tuple[str | None, str | None], assert_pops: bool,
                      role: str | None) -> None:
    """Lowers the caches on each split pair's tape (module docstring); `roles` are the
    attributes of the elements buffer's and the bookkeeping's allocs."""
    for aug, rev in _pairs(module):
        ret = aug.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        if not any(isinstance(v.type, tape.CacheType) for v in ret.arguments):
            continue  # nothing on the tape to lower (or lowered already)
        block = rev.body.block
        first = len(block.args) - len(ret.arguments)  # where the tape starts
        results: list[SSAValue] = []
        for k, v in enumerate(list(ret.arguments)):
            if not isinstance(v.type, tape.CacheType) or not isinstance(v.owner, tape.InitOp):
                results.append(v)
                continue
            init = v.owner
            element = v.type.element_type
            stack = alloc_growable(At(InsertPoint.before(init), roles[0]), element,
                                   DEFAULT_CAPACITY, roles[1])
            for user in [u.operation for u in v.uses if u.operation is not ret]:
                assert isinstance(user, tape.PushOp), user
                push_growable(At(InsertPoint.before(user), roles[0]), user.value, *stack,
                              element, role)
                Rewriter.erase_op(user)
            results += stack
            arg = block.args[first + k]
            args = [block.insert_arg(s.type, arg.index) for s in stack]
            for user in [u.operation for u in arg.uses]:
                _lower_reverse_use(user, args, roles, assert_pops, role)
            block.erase_arg(arg)
            first += 2
        Rewriter.replace_op(ret, func.ReturnOp(*results))
        for op in list(aug.body.block.ops):
            if isinstance(op, tape.InitOp) and not op.cache.uses:
                Rewriter.erase_op(op)
        aug.function_type = FunctionType.from_lists(
            aug.function_type.inputs.data, [r.type for r in results]
        )
        rev.function_type = FunctionType.from_lists(
            [a.type for a in block.args], rev.function_type.outputs.data
        )
        _update_calls(module, aug, rev)


def _update_calls(module: ModuleOp, aug: func.FuncOp, rev: func.FuncOp) -> None:
    """Calls of the pair pass the three memrefs of each lowered cache in its place."""
    calls = [op for op in module.walk() if isinstance(op, func.CallOp)]
    expanded: dict[SSAValue, list[SSAValue]] = {}
    for call in calls:
        if call.callee.root_reference.data != aug.sym_name.data:
            continue
        new = func.CallOp(aug.sym_name.data, list(call.arguments),
                          list(aug.function_type.outputs.data))
        Rewriter.insert_op(new, InsertPoint.before(call))
        results = list(new.results)
        for old in call.results:
            width = 3 if isinstance(old.type, tape.CacheType) else 1
            expanded[old], results = results[:width], results[width:]
            if width == 1:
                old.replace_all_uses_with(expanded[old][0])
    for call in calls:
        if call.callee.root_reference.data == rev.sym_name.data:
            args = [w for v in call.arguments for w in expanded.get(v, [v])]
            new = func.CallOp(rev.sym_name.data, args, list(rev.function_type.outputs.data))
            Rewriter.replace_op(call, new)
    for call in calls:
        if call.callee.root_reference.data == aug.sym_name.data:
            Rewriter.erase_op(call)


def _lower_reverse_use(user: Operation, stack: list[SSAValue], roles: tuple[str | None, str | None],
                       assert_pops: bool, role: str | None) -> None:
    slot, size, capacity = stack
    at = At(InsertPoint.before(user), roles[0])
    if isinstance(user, tape.PopOp):
        top = pop_index(at, size, user, assert_pops)
        value = at.load(at.load(slot), [top], role)
        if isinstance(value.owner, Operation):
            value.owner.location = user.location
        user.value.replace_all_uses_with(value)
    else:
        assert isinstance(user, tape.FreeOp), user
        at.op(memref.DeallocOp.get(at.load(slot)))
        for ref in (slot, size, capacity):
            at.op(memref.DeallocOp.get(ref))
    Rewriter.erase_op(user)
