"""`tapeflow-fwdad`: forward-mode automatic differentiation (Enzyme's `__enzyme_fwddiff`).

For each marked `@f` it adds `@f_fwd` beside it: the primal body, each op followed by
the tangent of its float results (a tangent per active value, carried through loops and
branches as extra iter_args and results; shadow memory for arrays). Nothing is stored
for later, so there is no tape and nothing for TapeFlow's other passes to do: the pass
exists because users' files mix forward mode into reverse-mode code.

A scalar op's tangent is built from its reverse-mode rule (`autodiff/rules/`), so the two
modes share one derivative per op: a rule maps the adjoint `d` of the result to `d * dy/dx`
for each operand `x`, which is linear in `d`; run with `d` the tangent of `x` and with `x`
the only active operand, it gives the term `dy/dx * tx` of the result's tangent
(`_OneOperand`). The sum of those terms over the distinct active operands is the tangent.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.transforms.autodiff.activity import const_args, is_float, is_float_memref
from tapeflow.transforms.autodiff.driver import zero_fill

FWD_ATTR = "tapeflow.fwddiff"

# Ops whose result aliases their first operand's memory: the shadow gets the same view.
_VIEWS = (memref.CastOp, memref.SubviewOp, memref.ReinterpretCastOp, memref.ExpandShapeOp,
          memref.CollapseShapeOp)


@dataclass(frozen=True)
class ForwardModePass(ModulePass):
    """Differentiates functions in forward mode: for each `@f`, adds `@f_fwd` beside it.

    Which functions: those carrying the unit attribute `tapeflow.fwddiff`, and those named
    by `functions=a,b`. The primal `@f` is left unchanged.

    Calling convention (Enzyme's `__enzyme_fwddiff`):
    - each float argument not marked `tapeflow.const` is followed by its tangent: a scalar
      by a scalar (the seed of the direction), a memref by its shadow (same type), which
      holds the tangent of the array's contents on entry and of its final contents on
      exit (Enzyme's shadow memory, updated in place);
    - integer, index and `tapeflow.const` arguments have no tangent;
    - the results are the tangents of `@f`'s float results (integer results are dropped).

    ```
    func.func @f(%x: memref<4xf64>, %s: f64) -> f64 attributes {tapeflow.fwddiff}
    // becomes, beside @f:
    func.func @f_fwd(%x: memref<4xf64>, %dx: memref<4xf64>, %s: f64, %ds: f64) -> f64
    ```

    Calls are inlined first (as `tapeflow-autodiff` does; recursion is refused there).
    Globals are constant: they have no shadow, and storing a value with a tangent into
    one (or into a `tapeflow.const` array) is an error, not a dropped derivative. Local
    float allocations get a zero-filled shadow. Supported ops: those of
    `tapeflow-autodiff` (`scf.for/if/while`, `arith`/`math` float ops with a rule,
    `memref.load/store/copy/alloc/alloca/dealloc/get_global`, views). An op it cannot
    differentiate is a `PassFailedException` naming the op and its location; the module
    is then left unchanged.
    """

    name = "tapeflow-fwdad"

    functions: tuple[str, ...] = ()

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from tapeflow.transforms.autodiff.rules import all_rules

        funcs = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        for name in self.functions:
            if name not in funcs:
                raise PassFailedException(
                    f"{self.name}: functions: no function named '{name}' in the module"
                )
        targets = [f for f in funcs.values()
                   if FWD_ATTR in f.attributes or f.sym_name.data in self.functions]
        rules = all_rules()
        built: list[tuple[Operation, Operation]] = []
        for primal in targets:
            name = f"{primal.sym_name.data}_fwd"
            if name in funcs:
                raise PassFailedException(
                    op_error(primal, f"cannot create @{name}: the symbol already exists"))
            if len(primal.body.blocks) != 1:
                raise PassFailedException(op_error(
                    primal, "cannot differentiate a function without a body or with several "
                    "blocks"))
            try:
                built.append((primal, _forward(primal, name, op, rules)))
            except DiagnosticException:
                raise
            except Exception as e:  # a bug here must still be a diagnostic, not a traceback
                raise PassFailedException(
                    op_error(primal, f"internal error while differentiating: {e!r}")) from e
        for primal, fn in built:  # only now, with every function built, touch the module
            Rewriter.insert_op(fn, InsertPoint.after(primal))


def _forward(primal: func.FuncOp, name: str, module: builtin.ModuleOp, rules) -> func.FuncOp:
    from tapeflow.transforms.autodiff.prepare import inline_calls, lower_affine, merge_globals

    work = primal.clone()
    inline_calls(work, module)
    merge_globals(work)
    lower_affine(work)
    const = const_args(work)
    src = work.body.block
    types: list[Attribute] = []
    for i, a in enumerate(src.args):
        types.append(a.type)
        if i not in const and (is_float(a.type) or is_float_memref(a.type)):
            types.append(a.type)
    entry = Block(arg_types=types)
    t = Tangents(rules, Builder(InsertPoint.at_end(entry)))
    args = iter(entry.args)
    for i, a in enumerate(src.args):
        new = next(args)
        new.name_hint = a.name_hint
        t.vmap[a] = new
        if i not in const and (is_float(a.type) or is_float_memref(a.type)):
            tangent = next(args)
            tangent.name_hint = f"d{a.name_hint}" if a.name_hint else None
            (t.shadow if is_float_memref(a.type) else t.tan)[a] = tangent
    t.ops(src)
    ret = src.last_op
    assert isinstance(ret, func.ReturnOp)
    results = [t.tangent_or_zero(v) for v in ret.arguments if is_float(v.type)]
    t.b.insert(func.ReturnOp(*results)).location = ret.location
    fn = func.FuncOp(name, (types, [r.type for r in results]), Region(entry))
    fn.location = primal.location
    return fn


class Tangents:
    """The forward sweep: each op of the primal rebuilt at `b`, then its tangent.

    `vmap` maps a primal value to its copy, `tan` a float scalar to its tangent (absent:
    zero), `shadow` a float memref to its shadow (absent: constant memory)."""

    def __init__(self, rules, b: Builder):
        self.rules = rules
        self.b = b
        self.vmap: dict[SSAValue, SSAValue] = {}
        self.tan: dict[SSAValue, SSAValue] = {}
        self.shadow: dict[SSAValue, SSAValue] = {}

    def const(self, value: float | int, type: Attribute) -> SSAValue:
        if is_float(type):
            return self.b.insert(arith.ConstantOp(builtin.FloatAttr(value, type), type)).result
        attr = builtin.IntegerAttr(value, type)
        return self.b.insert(arith.ConstantOp(attr, type)).result

    def tangent_or_zero(self, v: SSAValue) -> SSAValue:
        return self.tan[v] if v in self.tan else self.const(0.0, v.type)

    def ops(self, block: Block) -> None:
        """Every op of `block` but its terminator."""
        for op in list(block.ops)[:-1]:
            self.op(op)

    def op(self, op: Operation) -> None:
        kind = type(op)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, op)
            return
        if op.regions:
            raise PassFailedException(op_error(op, f"tapeflow-fwdad: unsupported op {op.name}"))
        self.clone(op)
        floats = [r for r in op.results if is_float(r.type)]
        if not floats or not any(o in self.tan for o in op.operands):
            return
        if isinstance(op, arith.ExtFOp | arith.TruncFOp):
            # the rule's adjoint has the result's type; the tangent has the operand's
            widened = kind(self.tan[op.operands[0]], op.results[0].type)
            self.tan[op.results[0]] = self.b.insert(widened).results[0]
            return
        if isinstance(op, arith.BitcastOp):
            return  # through the integer view: no derivative (as tapeflow-autodiff)
        rule = self.rules.get(kind)
        if rule is None or len(op.results) != 1:
            raise PassFailedException(
                op_error(op, f"tapeflow-fwdad: no derivative rule for {op.name}"))
        terms: list[SSAValue] = []
        for x in dict.fromkeys(o for o in op.operands if o in self.tan):
            one = _OneOperand(self, op, x)
            rule(one, op)
            terms += one.terms
        if terms:
            total = terms[0]
            for term in terms[1:]:
                total = self.b.insert(arith.AddfOp(total, term)).result
            self.tan[op.results[0]] = total

    def clone(self, op: Operation) -> Operation:
        new = op.clone(value_mapper=self.vmap)
        self.b.insert(new)
        for old, res in zip(op.results, new.results):
            self.vmap[old] = res
        return new

    # --- memory -------------------------------------------------------------------------

    def load(self, op: memref.LoadOp) -> None:
        self.clone(op)
        if op.memref in self.shadow and is_float(op.res.type):
            idx = [self.vmap[i] for i in op.indices]
            self.tan[op.res] = self.b.insert(memref.LoadOp.get(self.shadow[op.memref], idx)).res

    def store(self, op: memref.StoreOp) -> None:
        self.clone(op)
        if op.memref in self.shadow:
            idx = [self.vmap[i] for i in op.indices]
            value = self.tangent_or_zero(op.value)
            self.b.insert(memref.StoreOp.get(value, self.shadow[op.memref], idx))
        elif op.value in self.tan:
            raise PassFailedException(op_error(
                op, "tapeflow-fwdad: a value with a tangent is stored into constant memory (a "
                "global or an enzyme_const array), where its derivative would be lost"))

    def alloc(self, op: memref.AllocOp | memref.AllocaOp) -> None:
        new = self.clone(op)
        if is_float_memref(op.results[0].type):
            shadow = self.b.insert(new.clone())
            self.shadow[op.results[0]] = shadow.results[0]
            for o in zero_fill(shadow.results[0], list(new.operands)):
                self.b.insert(o)

    def dealloc(self, op: memref.DeallocOp) -> None:
        self.clone(op)
        if op.memref in self.shadow:
            self.b.insert(memref.DeallocOp.get(self.shadow[op.memref]))

    def view(self, op: Operation) -> None:
        new = self.clone(op)
        if op.operands[0] in self.shadow:
            view = new.clone()
            view.operands[0] = self.shadow[op.operands[0]]
            self.shadow[op.results[0]] = self.b.insert(view).results[0]

    def copy(self, op: memref.CopyOp) -> None:
        self.clone(op)
        dst = self.shadow.get(op.destination)
        if dst is None:
            if op.source in self.shadow:
                raise PassFailedException(op_error(
                    op, "tapeflow-fwdad: an array with a tangent is copied into constant memory"))
            return
        if op.source in self.shadow:
            self.b.insert(memref.CopyOp(self.shadow[op.source], dst))
            return
        mtype = dst.type
        assert isinstance(mtype, MemRefType)
        sizes = [self.b.insert(memref.DimOp.from_source_and_index(
            dst, self.const(d, IndexType()))).result
            for d, n in enumerate(mtype.get_shape()) if n < 0]
        for o in zero_fill(dst, sizes):
            self.b.insert(o)

    # --- control flow ---------------------------------------------------------------------

    def nested(self, block: Block, src: Block, terminator) -> None:
        """`src`'s ops into `block`, then `terminator(values)` of `src`'s terminator's
        operands followed by the tangents of its float operands."""
        outer, self.b = self.b, Builder(InsertPoint.at_end(block))
        self.ops(src)
        term = src.last_op
        assert term is not None
        values = [self.vmap[v] for v in term.operands]
        floats = [self.tangent_or_zero(v) for v in term.operands if is_float(v.type)]
        self.b.insert(terminator(values, floats)).location = term.location
        self.b = outer

    def bind(self, olds, news) -> None:
        """Maps `olds` to the first values of `news`, and the float ones' tangents to the
        values after them, in order."""
        news = list(news)
        values, tangents = news[: len(olds)], iter(news[len(olds):])
        for old, new in zip(olds, values, strict=True):
            self.vmap[old] = new
            if is_float(old.type):
                self.tan[old] = next(tangents)

    def for_op(self, op: scf.ForOp) -> None:
        inits = [self.vmap[v] for v in op.iter_args]
        inits += [self.tangent_or_zero(v) for v in op.iter_args if is_float(v.type)]
        old = op.body.block
        block = Block(arg_types=[IndexType(), *(a.type for a in inits)])
        self.bind([old.args[0], *old.args[1:]], block.args)
        self.nested(block, old, lambda vs, ts: scf.YieldOp(*vs, *ts))
        new = self.b.insert(scf.ForOp(self.vmap[op.lb], self.vmap[op.ub], self.vmap[op.step],
                                      inits, Region(block)))
        _keep(op, new)
        self.bind(op.results, new.results)

    def if_op(self, op: scf.IfOp) -> None:
        types = [r.type for r in op.results] + [r.type for r in op.results if is_float(r.type)]
        regions = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                regions.append(None)
                continue
            block = Block()
            self.nested(block, region.block, lambda vs, ts: scf.YieldOp(*vs, *ts))
            regions.append(Region(block))
        new = self.b.insert(scf.IfOp(self.vmap[op.cond], types, regions[0], regions[1]))
        _keep(op, new)
        self.bind(op.results, new.results)

    def while_op(self, op: scf.WhileOp) -> None:
        inits = [self.vmap[v] for v in op.arguments]
        inits += [self.tangent_or_zero(v) for v in op.arguments if is_float(v.type)]
        before_old, after_old = op.before_region.block, op.after_region.block
        before = Block(arg_types=[a.type for a in inits])
        self.bind(before_old.args, before.args)
        self.nested(before, before_old, lambda vs, ts: scf.ConditionOp(vs[0], *vs[1:], *ts))
        cond = before_old.last_op
        assert isinstance(cond, scf.ConditionOp)
        passed = list(cond.args)
        types = [v.type for v in passed] + [v.type for v in passed if is_float(v.type)]
        after = Block(arg_types=types)
        self.bind(after_old.args, after.args)
        self.nested(after, after_old, lambda vs, ts: scf.YieldOp(*vs, *ts))
        new = self.b.insert(scf.WhileOp(inits, types, Region(before), Region(after)))
        _keep(op, new)
        self.bind(op.results, new.results)


def _keep(old: Operation, new: Operation) -> None:
    new.location = old.location
    for k, v in old.attributes.items():
        new.attributes.setdefault(k, v)


class _OneOperand:
    """A reverse rule's view of forward mode (the `ReverseBuilder` protocol): the adjoint
    of `op`'s result is the tangent of `x`, `x` is its only active operand, and what the
    rule accumulates into `x` is the term `dy/dx * tx` of the result's tangent."""

    def __init__(self, t: Tangents, op: Operation, x: SSAValue):
        self.t, self.op, self.x = t, op, x
        self.b = t.b
        self.terms: list[SSAValue] = []

    def primal(self, value: SSAValue) -> SSAValue:
        return self.t.vmap[value]

    def adjoint(self, value: SSAValue) -> SSAValue | None:
        return self.t.tan[self.x] if value is self.op.results[0] else None

    def accumulate(self, value: SSAValue, contribution: SSAValue) -> None:
        if value is self.x:
            self.terms.append(contribution)

    def is_active(self, value: SSAValue) -> bool:
        return value is self.x

    def shadow(self, memref_value: SSAValue) -> SSAValue | None:
        return None

    def const(self, value: float | int, type: Attribute) -> SSAValue:
        return self.t.const(value, type)


_HANDLERS = {
    memref.LoadOp: Tangents.load,
    memref.StoreOp: Tangents.store,
    memref.AllocOp: Tangents.alloc,
    memref.AllocaOp: Tangents.alloc,
    memref.DeallocOp: Tangents.dealloc,
    memref.CopyOp: Tangents.copy,
    scf.ForOp: Tangents.for_op,
    scf.IfOp: Tangents.if_op,
    scf.WhileOp: Tangents.while_op,
    **{view: Tangents.view for view in _VIEWS},
}
