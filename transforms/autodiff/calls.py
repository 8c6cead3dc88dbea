"""Calls the AD keeps as calls: those of recursive functions (self- or mutually) and of
functions with a custom derivative.

Every other call is inlined (`prepare.inline_calls`). A kept call of `@g` is
differentiated as Enzyme differentiates a call it does not inline, from an augmented
forward and a reverse function. For a function with the attributes `enzyme_augment =
@aug` and `enzyme_gradient = @grad` (Enzyme's metadata of the same names, which
`__enzyme_register_gradient_*` sets), they are the user's, called with Enzyme's
conventions (`custom_reverse`) and never differentiated: a wrong custom derivative gives
a wrong gradient, as it does with Enzyme. For a recursive one they are built once per
module:

- `@g_aug` (the augmented forward): `@g`'s body with a `tape.push` of each value its
  reverse needs; it returns `@g`'s results. The caller's forward sweep calls it instead
  of `@g`.
- `@g_rev` (the reverse): takes `@g_grad`'s arguments (each float memref followed by its
  shadow, a seed per float result) and returns the gradients of the float scalar
  arguments; it pops what `@g_aug` pushed. The caller's reverse sweep calls it where the
  call's adjoint belongs (`reverse_call`).

Both take the tape caches of `@g`'s strongly connected component of the call graph (and
of the kept functions it calls) as trailing `!tape.cache<T>` arguments, created once by
the outermost caller (`finish`). The caches are shared by every call, so they must stay
LIFO across calls: `@g_aug` pushes each block's values at the end of that block (after
the calls it made), and `@g_rev` pops them at the start of the block's reverse (before
reversing those calls): the reverse sweep mirrors the forward, call by call. This is
Enzyme's layout (a growable stack per cached value); `tapeflow-lower-tape` lowers a
cache passed to a call so, and TapeFlow's region passes leave such caches alone.

In `@g`'s split build (`Gradient(split=True)`) values of the function body are cached
(not used directly: the reverse is another function) and loads always are (the caller
may overwrite the memory after the call). Its local buffers, and their shadows, move to
the heap and reach `@g_rev` on caches of memrefs (`_carry_buffers`), which frees them. A
differentiated function that is itself recursive becomes `@f_grad` = create the caches,
`@f_aug`, `@f_rev`, free them.

Not done: TapeFlow's regions inside a recursive function's loops. Its caches are the
arguments every call shares, so a loop's pushes interleave with those of the calls made
before and after it; a record tape per loop would need its own call-indexed stack.
"""

from __future__ import annotations

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.dialects.tape import CacheType, FreeOp, InitOp, PopOp, PushOp
from tapeflow.transforms.autodiff.activity import const_args, is_float, is_float_memref

REVERSE_OF = "tapeflow.reverse_of"
"""On a kept call's reverse (`@g_rev`) until its cache operands are added (`_patch`)."""
AUGMENTED_OF = "tapeflow.augmented_of"
"""Likewise on its augmented forward (`@g_aug`)."""
_CARRIED = (memref.GetGlobalOp, memref.CastOp)
"""Forward-sweep ops the reverse function may use: copied into it (no tape needed)."""

AUGMENT, GRADIENT = "enzyme_augment", "enzyme_gradient"

CacheKey = tuple[str, int]  # (function, position of its tape.init)


def custom_derivatives(module: ModuleOp) -> dict[str, tuple[func.FuncOp, func.FuncOp]]:
    """Each function with `enzyme_augment`/`enzyme_gradient` -> (augment, gradient)."""
    funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    out: dict[str, tuple[func.FuncOp, func.FuncOp]] = {}
    for name, fn in funcs.items():
        refs = [fn.attributes.get(a) for a in (AUGMENT, GRADIENT)]
        if refs == [None, None]:
            continue
        pair = []
        for attr, ref in zip((AUGMENT, GRADIENT), refs, strict=True):
            if not isinstance(ref, SymbolRefAttr):
                raise PassFailedException(op_error(
                    fn, f"@{name} has {'no' if ref is None else 'a malformed'} {attr} "
                    f"(a custom derivative needs {AUGMENT} = @f and {GRADIENT} = @g)"))
            target = funcs.get(ref.string_value())
            if target is None or not target.body.blocks:
                raise PassFailedException(op_error(
                    fn, f"{attr} of @{name}: no function @{ref.string_value()} defined in "
                    "this module"))
            pair.append(target)
        out[name] = (pair[0], pair[1])
    return out


def recursive_functions(module: ModuleOp) -> dict[str, tuple[str, ...]]:
    """Each function in a call cycle -> its strongly connected component (module order)."""
    funcs = [f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks]
    names = {f.sym_name.data for f in funcs}
    graph = {
        f.sym_name.data: sorted(
            {o.callee.string_value() for o in f.walk() if isinstance(o, func.CallOp)} & names
        )
        for f in funcs
    }
    reach = {name: _callees(graph, name) for name in graph}
    out: dict[str, tuple[str, ...]] = {}
    for name in graph:  # in a cycle: it reaches itself; its component: what reaches it back
        if name in reach[name]:
            out[name] = tuple(g for g in graph if g in reach[name] and name in reach[g])
    return out


def _callees(graph: dict[str, list[str]], name: str) -> set[str]:
    """The functions a call of `name` may reach (through one call or more)."""
    seen: set[str] = set()
    todo = list(graph[name])
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo.extend(graph[f])
    return seen


class KeptCalls:
    """The `@g_aug`/`@g_rev` pair of each kept function of one module, built on demand."""

    def __init__(self, module: ModuleOp, rules, policy: str):
        self.module = module
        self.rules = {**rules, func.CallOp: self.reverse_call}
        self.policy = policy
        self.custom = custom_derivatives(module)
        self.sccs = {
            n: scc for n, scc in recursive_functions(module).items() if n not in self.custom
        }
        self.keep = frozenset(self.sccs) | frozenset(self.custom)
        self.funcs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
        self.lists: dict[tuple[str, ...], list[CacheKey]] = {}
        self.types: dict[CacheKey, Attribute] = {}
        self.pairs: dict[str, tuple[func.FuncOp, func.FuncOp]] = {}
        self._building: set[tuple[str, ...]] = set()
        self._primal_positions: dict[str, list[int]] = {}

    # -- in any gradient: the reverse of a kept call --------------------------------------
    def reverse_call(self, g, op: func.CallOp) -> None:
        """`grads = @g_rev(args with shadows, seeds)`; the gradients flow to the args."""
        name = op.callee.string_value()
        if name in self.custom:
            self.custom_reverse(g, op)
            return
        _, operands, active = self._with_shadows(g, op, "a recursive function")
        operands += [g.adjoint_or_zero(r) for r in op.results if is_float(r.type)]
        rev = g.b.insert(func.CallOp(f"{name}_rev", operands, [a.type for a in active]))
        rev.location = op.location
        rev.attributes[REVERSE_OF] = StringAttr(name)
        for a, d in zip(active, rev.results, strict=True):
            g.accumulate(a, d)

    def custom_reverse(self, g, op: func.CallOp) -> None:
        """A call of `@f` with a custom derivative, as Enzyme calls it: in the forward
        sweep `@aug(args)`, each float buffer followed by its shadow, in place of the call
        (`mark_forward` removes it) when `@aug` returns `@f`'s results or `@f` has none,
        before it otherwise (`@f` gives the results); its results but `@f`'s are the tape.
        In the reverse sweep `@grad(args, the float results' adjoints, the tape)` returns
        the gradients of the float scalar arguments."""
        name = op.callee.string_value()
        aug_fn, grad_fn = self.custom[name]
        forward, reverse, active = self._with_shadows(
            g, op, "a function with a custom derivative")
        outputs = list(aug_fn.function_type.outputs.data)
        replaces = outputs[: len(op.results)] == list(op.result_types) and op.results
        aug = func.CallOp(aug_fn.sym_name.data, forward, outputs)
        aug.location = op.location
        _check_call(op, aug_fn, aug)
        Rewriter.insert_op(aug, InsertPoint.before(op) if op.results and not replaces
                           else InsertPoint.after(op))
        tape = list(aug.results[len(op.results) :] if replaces else aug.results)
        reverse += [g.adjoint_or_zero(r) for r in op.results if is_float(r.type)]
        reverse += [g.primal(t) for t in tape]
        grad = g.b.insert(func.CallOp(
            grad_fn.sym_name.data, reverse, list(grad_fn.function_type.outputs.data)))
        grad.location = op.location
        _check_call(op, grad_fn, grad)
        if [r.type for r in grad.results] != [a.type for a in active]:
            raise PassFailedException(op_error(
                op, f"the custom gradient @{grad_fn.sym_name.data} of @{name} returns "
                f"{len(grad.results)} value(s); @{name} has {len(active)} active float "
                "argument(s)"))
        for a, d in zip(active, grad.results, strict=True):
            g.accumulate(a, d)
        g.__dict__.setdefault("custom_calls", []).append(
            (op, aug if replaces or not op.results else None))

    def _with_shadows(self, g, op: func.CallOp, what: str):
        """The call's arguments, each float buffer followed by its shadow (Enzyme's
        convention), as the forward sweep has them and as the reverse sweep has them, and
        its active float scalar arguments."""
        name = op.callee.string_value()
        const = const_args(self.funcs[name])
        forward: list[SSAValue] = []
        reverse: list[SSAValue] = []
        active: list[SSAValue] = []
        for n, a in enumerate(op.arguments):
            forward.append(a)
            reverse.append(g.primal(a))
            if n in const:
                continue
            if is_float_memref(a.type):
                shadow = g.shadow(a)
                if shadow is None:
                    raise PassFailedException(op_error(
                        op, f"unsupported: an inactive float buffer passed to @{name} ({what})"))
                forward.append(shadow)
                reverse.append(shadow)
            elif is_float(a.type):
                active.append(a)
        return forward, reverse, active

    def mark_forward(self, fn: func.FuncOp, g) -> None:
        """The forward sweep's active kept calls of `fn` call `@g_aug` instead; those of a
        function with a custom derivative leave the augment's call alone."""
        for op, aug in g.__dict__.get("custom_calls", ()):
            if aug is not None:
                for old, new in zip(op.results, aug.results, strict=False):
                    old.replace_all_uses_with(new)
                Rewriter.erase_op(op)
        for op in fn.walk():
            if (
                isinstance(op, func.CallOp)
                and REVERSE_OF not in op.attributes
                and op.callee.string_value() in self.sccs
                and g.activity.op_is_active(op)
            ):
                name = op.callee.string_value()
                op.attributes[AUGMENTED_OF] = StringAttr(name)
                op.properties["callee"] = SymbolRefAttr(f"{name}_aug")

    # -- the outermost caller ---------------------------------------------------------------
    def finish(self, fn: func.FuncOp) -> None:
        """Builds the pairs `fn`'s kept calls need, creates their caches at `fn`'s entry
        (freed before its return) and passes them to the calls."""
        entry = fn.body.block
        keys: list[CacheKey] = []
        for name in self._called(fn):
            self.ensure(name)
            keys += [k for k in self.lists[self.sccs[name]] if k not in keys]
        caches: dict[CacheKey, SSAValue] = {}
        ret = entry.last_op
        assert ret is not None
        for key in reversed(keys):
            init = InitOp(self.types[key])
            init.location = fn.location
            Rewriter.insert_op(init, InsertPoint.at_start(entry))
            caches[key] = init.cache
            Rewriter.insert_op(FreeOp(init.cache), InsertPoint.before(ret))
        self._patch(fn, caches)

    def wrapper(self, primal: func.FuncOp, grad_name: str) -> func.FuncOp:
        """`@f_grad` of a recursive `@f`: caches, `@f_aug`, `@f_rev`, frees."""
        name = primal.sym_name.data
        self.ensure(name)
        aug, rev = self.pairs[name]
        n_caches = len(self.lists[self.sccs[name]])
        rev_args = list(rev.body.block.args)
        types = [a.type for a in rev_args[: len(rev_args) - n_caches]]
        block = Block(arg_types=types)
        primal_positions = self._primal_positions[name]
        primal_args = [block.args[i] for i in primal_positions]
        call = func.CallOp(f"{name}_aug", primal_args, list(aug.function_type.outputs))
        call.attributes[AUGMENTED_OF] = StringAttr(name)
        back = func.CallOp(f"{name}_rev", list(block.args), list(rev.function_type.outputs))
        back.attributes[REVERSE_OF] = StringAttr(name)
        block.add_ops([call, back, func.ReturnOp(*back.results)])
        for op in block.ops:
            op.location = primal.location
        signature = FunctionType.from_lists(types, list(back.result_types))
        fn = func.FuncOp(grad_name, signature, Region(block))
        fn.location = primal.location
        self.finish(fn)
        return fn

    def functions(self) -> list[tuple[func.FuncOp, func.FuncOp, func.FuncOp]]:
        """(primal, aug, rev) of every pair built, for the pass to insert."""
        return [(self.funcs[n], *self.pairs[n]) for n in self.pairs]

    # -- building a component's pairs ---------------------------------------------------
    def ensure(self, name: str) -> None:
        scc = self.sccs[name]
        if scc in self.lists or scc in self._building:
            return
        self._building.add(scc)
        built = {member: self._build(member) for member in scc}
        keys: list[CacheKey] = []
        for member, (fn, _) in built.items():
            for i, init in enumerate(o for o in fn.body.block.ops if isinstance(o, InitOp)):
                self.types[(member, i)] = init.cache.type.element_type  # type: ignore[union-attr]
                keys.append((member, i))
        for member, (fn, _) in built.items():
            for dep in self._called(fn):
                if self.sccs[dep] != scc:
                    self.ensure(dep)
                    keys += [k for k in self.lists[self.sccs[dep]] if k not in keys]
        self.lists[scc] = keys
        for member, (fn, g) in built.items():
            self.pairs[member] = self._split(member, fn, g, keys)

    def _called(self, fn: func.FuncOp) -> list[str]:
        return list(dict.fromkeys(
            o.attributes[name].data  # type: ignore[union-attr]
            for o in fn.walk()
            for name in (AUGMENTED_OF, REVERSE_OF)
            if name in o.attributes
        ))

    def _build(self, name: str):
        from tapeflow.transforms.autodiff.driver import Gradient
        from tapeflow.transforms.autodiff.prepare import (
            count_while_iterations,
            hoist_allocations,
            inline_calls,
            lower_affine,
            merge_globals,
        )

        fn = self.funcs[name].clone()
        for attr in ("tapeflow.autodiff", "tapeflow.fwddiff"):
            fn.attributes.pop(attr, None)
        fn.res_attrs = None
        inline_calls(fn, self.module, self.keep)
        merge_globals(fn)
        lower_affine(fn)
        hoist_allocations(fn)
        _heap_buffers(fn, name)
        g = Gradient(fn, self.rules, self.policy, count_while_iterations(fn), split=True)
        g.build()
        _carry_buffers(fn, g.split_marker)
        fn.arg_attrs = None
        self.mark_forward(fn, g)
        return fn, g

    def _split(self, name: str, fn: func.FuncOp, g, keys: list[CacheKey]):
        entry = fn.body.block
        _defer_pushes(fn, g.split_marker)
        n_seeds = sum(1 for v in g.results if is_float(v.type))
        shadows = {v for v in g.shadows.values() if isinstance(v, BlockArgument)}
        seeds = set(entry.args[len(entry.args) - n_seeds :])
        self._primal_positions[name] = [
            a.index for a in entry.args if a not in shadows and a not in seeds
        ]
        rev = fn.clone()
        # The augmented forward: the forward sweep, returning the primal results.
        ops = list(entry.ops)
        cut = ops.index(g.split_marker)
        for op in reversed(ops[cut:]):
            _erase(op)
        entry.add_op(func.ReturnOp(*g.results))
        for op in reversed(list(entry.ops)):
            if isinstance(op, memref.GetGlobalOp) and not op.memref.uses:
                _erase(op)
        for arg in reversed(list(entry.args)):
            if arg in shadows or arg in seeds:
                if arg.uses:
                    raise PassFailedException(
                        op_error(fn, "internal error: the forward sweep uses a shadow")
                    )
                entry.erase_arg(arg)
        self._with_caches(fn, name, keys, f"{name}_aug")
        # The reverse: the reverse sweep, with what it uses of the forward copied in.
        r_entry = rev.body.block
        r_ops = list(r_entry.ops)
        for op in reversed(r_ops[:cut]):
            if isinstance(op, InitOp) or not any(r.uses for r in op.results):
                if not isinstance(op, InitOp):
                    _erase(op)
            elif not isinstance(op, _CARRIED) and not op.name.startswith("arith."):
                raise PassFailedException(op_error(
                    op, "internal error: the reverse of a recursive function uses a value "
                    "of its forward sweep"))
        _erase(r_ops[cut])
        for op in list(r_entry.ops):
            if isinstance(op, FreeOp):
                _erase(op)
        self._with_caches(rev, name, keys, f"{name}_rev")
        return fn, rev

    def _with_caches(self, fn: func.FuncOp, name: str, keys: list[CacheKey], new_name: str) -> None:
        """Renames `fn`, turns its `tape.init`s into trailing cache arguments (one per key
        of its component's list) and passes them to its kept calls."""
        entry = fn.body.block
        inits = [o for o in entry.ops if isinstance(o, InitOp)]
        caches: dict[CacheKey, SSAValue] = {}
        for key in keys:
            arg = entry.insert_arg(CacheType(self.types[key]), len(entry.args))
            caches[key] = arg
        for i, init in enumerate(inits):
            init.cache.replace_all_uses_with(caches[(name, i)])
            _erase(init)
        self._patch(fn, caches)
        fn.sym_name = StringAttr(new_name)
        fn.sym_visibility = StringAttr("private")
        ret = entry.last_op
        assert ret is not None
        fn.function_type = FunctionType.from_lists(
            [a.type for a in entry.args], [v.type for v in ret.operands]
        )

    def _patch(self, fn: func.FuncOp, caches: dict[CacheKey, SSAValue]) -> None:
        for op in list(fn.walk()):
            for attr in (AUGMENTED_OF, REVERSE_OF):
                if attr in op.attributes:
                    callee = op.attributes.pop(attr).data  # type: ignore[union-attr]
                    extra = [caches[k] for k in self.lists[self.sccs[callee]]]
                    new = func.CallOp(op.callee, [*op.operands, *extra], list(op.result_types))
                    new.location = op.location
                    Rewriter.replace_op(op, new)


def _heap_buffers(fn: func.FuncOp, name: str) -> None:
    """The function's buffers (and so their shadows) on the heap, freed at its end: the
    reverse, another function, still uses them (`_carry_buffers`)."""
    entry = fn.body.block
    ret = entry.last_op
    assert ret is not None
    for op in list(fn.walk()):
        if not isinstance(op, memref.AllocOp | memref.AllocaOp):
            continue
        if op.parent_block() is not entry:
            raise PassFailedException(op_error(
                op, f"unsupported: a buffer allocated in a loop or branch of @{name}, a "
                "recursive function, with a size computed there"))
        if isinstance(op, memref.AllocaOp):
            heap = memref.AllocOp(list(op.dynamic_sizes), list(op.symbol_operands),
                                  op.memref.type, op.alignment)
            heap.location = op.location
            heap.memref.name_hint = op.memref.name_hint
            Rewriter.replace_op(op, heap)
            Rewriter.insert_op(memref.DeallocOp.get(heap.memref), InsertPoint.before(ret))


def _carry_buffers(fn: func.FuncOp, marker: Operation) -> None:
    """Each buffer of the forward sweep the reverse uses (a local buffer, its shadow) is
    pushed at the forward's end, after every other push, and popped first in the reverse
    (a cache of memrefs): the reverse function gets it as it gets any other value."""
    entry = fn.body.block
    for op in list(entry.ops):  # a cast the reverse uses is recast there, of the pop
        if op is marker:
            break
        if isinstance(op, memref.CastOp) and isinstance(op.source.owner, memref.AllocOp):
            late = [u for u in op.dest.uses if marker.is_before_in_block(_top(u.operation, entry))]
            if late:
                recast = op.clone()
                Rewriter.insert_op(recast, InsertPoint.after(marker))
                for u in late:
                    u.operation.operands[u.index] = recast.dest
    after = {op for op in entry.ops if entry.get_operation_index(op)
             > entry.get_operation_index(marker)}
    pops: list[Operation] = []
    for op in list(entry.ops):
        if op is marker:
            break
        if not isinstance(op, memref.AllocOp):
            continue
        value = op.memref
        uses = [u for u in value.uses if _top(u.operation, entry) in after]
        if not uses:
            continue
        init = InitOp(value.type)
        Rewriter.insert_op(init, InsertPoint.at_start(entry))
        Rewriter.insert_op(PushOp(init.cache, value), InsertPoint.before(marker))
        pop = PopOp(init.cache)
        pops.insert(0, pop)
        for u in uses:
            u.operation.operands[u.index] = pop.value
    Rewriter.insert_op(pops, InsertPoint.after(marker))


def _top(op: Operation, block: Block) -> Operation:
    while op.parent_block() is not block:
        op = op.parent_op()  # type: ignore[assignment]
    return op


def _check_call(site: func.CallOp, callee: func.FuncOp, call: func.CallOp) -> None:
    """A custom derivative's function must take what Enzyme passes it."""
    want = list(callee.function_type.inputs.data)
    got = [v.type for v in call.operands]
    if want != got:
        raise PassFailedException(op_error(
            site, f"the custom derivative @{callee.sym_name.data} takes "
            f"({', '.join(map(str, want))}); Enzyme's convention passes "
            f"({', '.join(map(str, got))})"))


def _defer_pushes(fn: func.FuncOp, marker: Operation) -> None:
    """Moves each push to the end of its block (the forward sweep's end for the body):
    the calls made in a block then push before it, so its pops, at the start of its
    reverse, come first (module docstring)."""
    entry = fn.body.block
    for op in list(fn.walk()):
        if isinstance(op, PushOp):
            block = op.parent_block()
            assert block is not None
            end = marker if block is entry else block.last_op
            assert end is not None and (end is marker or end.has_trait(IsTerminator))
            op.detach()
            Rewriter.insert_op(op, InsertPoint.before(end))


def _erase(op: Operation) -> None:
    Rewriter.erase_op(op, safe_erase=False)
