"""Normalisation of a function before differentiation (on a clone, never on the input).

1. `func.call`s of functions defined in the module are inlined (recursively, with a depth
   limit), but those of recursive functions and of functions with a custom derivative
   (`calls.py` keeps them). Then every `memref.cast` (a static
   buffer passed as a `memref<?xT>` argument) is folded away: its loads, stores and dims
   use the cast's source, so the AD sees the accesses of the buffer itself (the
   activity and shadow of a cast result are not followed back to its source).
2. `affine.for/load/store/apply/yield` become `scf.for`, `memref.load/store` and `arith`
   index arithmetic (single-result bound maps only; `affine.if/min/max/parallel` are
   rejected with a diagnostic).
3. Buffers allocated inside loops or branches (`memref.alloc/alloca` whose sizes are known
   in the function body) are hoisted to the function body and freed at its end, so that
   they, and their shadows, outlive the forward sweep. Each iteration then reuses one
   buffer instead of a fresh one, which changes nothing for programs that write before
   they read; loads from it are cached, as the next iteration overwrites it.
4. Every `memref.get_global` of one global becomes one, at the start of the body
   (`merge_globals`), so the AD sees one buffer per global.
5. Every `scf.while` gets a trailing `index` iteration counter (an extra argument, result,
   forwarded value and `+1` in the after region): its last result is the trip count the
   reverse sweep loops over.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable
from xdsl.transforms.lower_affine import affine_expr_ops
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error

MAX_INLINE_DEPTH = 16


def _map_ops(
    op: Operation, amap: affine.AffineMapAttr | None, operands: Sequence[SSAValue]
) -> tuple[list[Operation], list[SSAValue]]:
    if amap is None:
        return [], list(operands)
    data = amap.data
    dims, syms = list(operands[: data.num_dims]), list(operands[data.num_dims :])
    ops: list[Operation] = []
    values: list[SSAValue] = []
    for expr in data.results:
        try:
            new_ops, value = affine_expr_ops(expr, dims, syms)
        except Exception as e:  # malformed map
            raise PassFailedException(op_error(op, f"cannot lower affine map: {e}")) from e
        ops.extend(new_ops)
        values.append(value)
    return ops, values


def _bound(op: affine.ForOp, amap: affine.AffineMapAttr, operands, what: str):
    if len(amap.data.results) != 1:
        raise PassFailedException(
            op_error(
                op,
                f"unsupported: {what} bound with {len(amap.data.results)} results (min/max bounds)",
            )
        )
    ops, (value,) = _map_ops(op, amap, operands)
    return ops, value


def lower_affine(fn: func.FuncOp) -> None:
    for op in list(fn.walk()):
        if isinstance(op, affine.ForOp):
            lb_ops, lb = _bound(op, op.lowerBoundMap, op.lowerBoundOperands, "lower")
            ub_ops, ub = _bound(op, op.upperBoundMap, op.upperBoundOperands, "upper")
            step = arith.ConstantOp(IntegerAttr(op.step.value.data, IndexType()))
            Rewriter.insert_op([*lb_ops, *ub_ops, step], InsertPoint.before(op))
            new = scf.ForOp(lb, ub, step, list(op.inits), op.detach_region(op.body))
            new.location = op.location
            new.attributes.update(op.attributes)
            Rewriter.replace_op(op, new)
        elif isinstance(op, affine.YieldOp):
            new = scf.YieldOp(*op.arguments)
            new.location = op.location
            Rewriter.replace_op(op, new)
        elif isinstance(op, affine.LoadOp):
            ops, indices = _map_ops(op, op.map, op.indices)
            Rewriter.insert_op(ops, InsertPoint.before(op))
            new = memref.LoadOp.get(op.memref, indices)
            new.location = op.location
            Rewriter.replace_op(op, new)
        elif isinstance(op, affine.StoreOp):
            ops, indices = _map_ops(op, op.map, op.indices)
            Rewriter.insert_op(ops, InsertPoint.before(op))
            new = memref.StoreOp.get(op.value, op.memref, indices)
            new.location = op.location
            Rewriter.replace_op(op, new)
        elif isinstance(op, affine.ApplyOp):
            ops, (value,) = _map_ops(op, op.map, op.mapOperands)
            Rewriter.insert_op(ops, InsertPoint.before(op))
            Rewriter.replace_op(op, [], [value])
        elif op.name.startswith("affine."):
            raise PassFailedException(op_error(op, "unsupported affine construct"))


def inline_calls(fn: func.FuncOp, module: ModuleOp, keep: frozenset[str] = frozenset()) -> None:
    """Inlines every call but those of the functions `keep` names (recursive ones, those
    with a custom derivative: `autodiff/calls.py` differentiates their calls as calls)."""
    for _ in range(MAX_INLINE_DEPTH + 1):
        calls = [
            op
            for op in fn.walk()
            if isinstance(op, func.CallOp) and op.callee.string_value() not in keep
        ]
        if not calls:
            fold_memref_casts(fn)
            return
        for call in calls:
            callee = SymbolTable.lookup_symbol(module, call.callee)
            if not isinstance(callee, func.FuncOp) or not callee.body.blocks:
                raise PassFailedException(
                    op_error(
                        call,
                        f"cannot differentiate a call to @{call.callee.string_value()}"
                        " (not a function defined in this module)",
                    )
                )
            if len(callee.body.blocks) != 1:
                raise PassFailedException(
                    op_error(call, "unsupported: callee with unstructured control flow")
                )
            body = callee.body.clone()
            block = body.block
            for arg, operand in zip(block.args, call.arguments, strict=True):
                arg.replace_all_uses_with(operand)
            ret = block.last_op
            assert isinstance(ret, func.ReturnOp)
            for op in list(block.ops)[:-1]:
                op.detach()
                Rewriter.insert_op(op, InsertPoint.before(call))
            Rewriter.replace_op(call, [], list(ret.arguments))
    raise PassFailedException(
        op_error(fn, f"calls nest deeper than {MAX_INLINE_DEPTH} levels (recursion?)")
    )


def merge_globals(fn: func.FuncOp) -> None:
    """One `memref.get_global` per global, at the start of the body (after inlining each
    callee brought its own): the AD tracks memory per SSA buffer, so every access of a
    global must go through one value, as every access of an argument does. A
    `memref.cast` of a global used only by loads and stores (a global array passed to a
    `double *` parameter) is replaced by the global itself (same elements)."""
    entry = fn.body.block
    first: dict[str, SSAValue] = {}
    for op in list(fn.walk()):
        if not isinstance(op, memref.GetGlobalOp):
            continue
        name = op.name_.string_value()
        if name in first:
            Rewriter.replace_op(op, [], [first[name]])
            continue
        first[name] = op.memref
        op.detach()
        Rewriter.insert_op(op, InsertPoint.at_start(entry))
    for op in list(fn.walk()):
        if (
            isinstance(op, memref.CastOp)
            and isinstance(op.source.owner, memref.GetGlobalOp)
            and all(
                isinstance(u.operation, memref.LoadOp | memref.StoreOp)
                and u.operation.memref is op.dest
                for u in op.dest.uses
            )
        ):
            Rewriter.replace_op(op, [], [op.source])


def fold_memref_casts(fn: func.FuncOp) -> None:
    """Loads, stores and dims through a same-rank `memref.cast` use its source instead;
    a cast with other uses stays (and is refused by the AD when it is active)."""
    for cast in [op for op in fn.walk() if isinstance(op, memref.CastOp)]:
        src, res = cast.source, cast.dest
        if len(src.type.get_shape()) != len(res.type.get_shape()):
            continue
        for use in list(res.uses):
            if isinstance(use.operation, memref.LoadOp | memref.StoreOp | memref.DimOp):
                use.operation.operands[use.index] = src
        if not res.uses:
            Rewriter.erase_op(cast)


def hoist_allocations(fn: func.FuncOp) -> None:
    entry = fn.body.block
    ret = entry.last_op
    assert ret is not None
    for op in list(fn.walk()):
        if not isinstance(op, memref.AllocOp | memref.AllocaOp) or op.parent_block() is entry:
            continue
        if any(_def_block(v) is not entry for v in op.operands):
            continue  # sizes computed inside the loop: left alone (diagnosed if active)
        top = op
        while top.parent_block() is not entry:
            top = top.parent_op()
            assert top is not None
        buffer = op.results[0]
        deallocs = [u.operation for u in buffer.uses if isinstance(u.operation, memref.DeallocOp)]
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(top))
        for dealloc in deallocs:
            Rewriter.erase_op(dealloc)
        if isinstance(op, memref.AllocOp):
            Rewriter.insert_op(memref.DeallocOp.get(buffer), InsertPoint.before(ret))


def _def_block(value: SSAValue):
    owner = value.owner
    return owner if not isinstance(owner, Operation) else owner.parent_block()


def count_while_iterations(fn: func.FuncOp) -> set[scf.WhileOp]:
    """Adds the trailing iteration counter to every scf.while; returns the new ops."""
    counted: set[scf.WhileOp] = set()
    for op in list(fn.walk()):
        if not isinstance(op, scf.WhileOp):
            continue
        before, after = op.before_region.block, op.after_region.block
        cond = before.last_op
        yield_ = after.last_op
        assert isinstance(cond, scf.ConditionOp)
        assert isinstance(yield_, scf.YieldOp)
        index = IndexType()
        n_before = before.insert_arg(index, len(before.args))
        n_before.name_hint = "iter"
        new_cond = scf.ConditionOp(cond.condition, *cond.args, n_before)
        new_cond.location = cond.location
        Rewriter.replace_op(cond, new_cond)
        n_after = after.insert_arg(index, len(after.args))
        n_after.name_hint = "iter"
        one = arith.ConstantOp(IntegerAttr(1, index))
        inc = arith.AddiOp(n_after, one)
        Rewriter.insert_op([one, inc], InsertPoint.before(yield_))
        new_yield = scf.YieldOp(*yield_.arguments, inc)
        new_yield.location = yield_.location
        Rewriter.replace_op(yield_, new_yield)
        zero = arith.ConstantOp(IntegerAttr(0, index))
        Rewriter.insert_op(zero, InsertPoint.before(op))
        before_region, after_region = op.before_region, op.after_region
        op.detach_region(before_region)
        op.detach_region(after_region)
        new = scf.WhileOp(
            [*op.arguments, zero], [*op.result_types, index], before_region, after_region
        )
        new.location = op.location
        new.attributes.update(op.attributes)
        new.results[-1].name_hint = "trips"
        Rewriter.replace_op(op, new, list(new.results[:-1]))
        counted.add(new)
    return counted
