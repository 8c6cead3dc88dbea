"""What LLVM does to a function before Enzyme differentiates it, for Enzyme-MLIR.

Enzyme (LLVM) differentiates the IR `-O3` made: calls inlined, every loop in canonical
form with an induction variable from 0 by 1, scalars in registers. Enzyme-MLIR
differentiates the MLIR it is given, and 0.0.16 gets some of what -O3 removes wrong
(test_enzyme_mlir_bugs.py). So `enzyme-autodiff` hands it the function after `STEPS`,
each standing for an LLVM pass:

- `inline_calls` (LLVM's inliner): Enzyme-MLIR refuses a call whose callee touches memory
  ("cannot differentiate a call in reverse mode whose callee touches memory"); -O3
  inlines the small functions of these kernels.
- `normalize_steps` (the canonical induction variable of LoopSimplify and IndVarSimplify,
  which Enzyme's CacheUtility relies on): Enzyme-MLIR 0.0.16 sizes the cache of
  `scf.for lb to ub step k` as floor((ub - lb) / k) values and reverses it at
  lb + ub - 1 - iv, both wrong unless k divides the range; from 0 by 1 both are right.
- `promote_accumulators` (LICM's scalar promotion, then GVN's store-to-load forwarding):
  `M[x] = 0; for k: M[x] += ...` with M[x] in a register through the loop, where the
  other accesses of M in it provably touch other elements (their index minus x, over
  the values the loop can take, is never 0). Enzyme-MLIR 0.0.16's reverse of a constant
  stored over an active element is missing; once the zero no longer reaches the loop
  through M[x], that costs nothing.

The steps run on a copy of the module that Enzyme reads (`prepared`): the module's own
functions never change. Each keeps every value the function computes, bit for bit:
inlining moves ops, the induction value lb + j * k is the one the loop had (exact index
arithmetic), a promoted load reads what the register holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.transforms.analysis.constants import const_int, trip_count


def inline_calls(module: ModuleOp, f: func.FuncOp) -> None:
    """Every call in `f` to a function defined in `module` inlined, but those of recursive
    functions (LLVM does not inline a call cycle either). A call it cannot inline (of a
    declaration, of a callee of several blocks) leaves `f` as it was, for Enzyme-MLIR to
    take or refuse with its own message."""
    from tapeflow.transforms.autodiff.calls import recursive_functions
    from tapeflow.transforms.autodiff.prepare import inline_calls as inline

    keep = frozenset(recursive_functions(module)) | frozenset(
        g.sym_name.data for g in module.ops if isinstance(g, func.FuncOp) and not g.body.blocks
    )
    work = f.clone()
    try:
        inline(work, module, keep)
    except PassFailedException:
        return
    f.detach_region(f.body)
    f.add_region(work.detach_region(work.body))


def normalize_steps(module: ModuleOp, f: func.FuncOp) -> int:
    """Every `scf.for lb to ub step k` of `index` in `f` with k not the constant 1 as a loop
    from 0 to its trip count by 1, its induction value lb + j * k computed in the body;
    returns how many it rewrote. The trip count is a constant when the bounds are, else
    ceildivsi(ub - lb, k) before the loop (at most 0 when ub <= lb: no iteration)."""
    done = 0
    for loop in [op for op in f.walk() if isinstance(op, scf.ForOp)]:
        j = loop.body.block.args[0]
        if const_int(loop.step) == 1 or not isinstance(j.type, IndexType):
            continue
        trips = trip_count(loop)
        made: list[Operation] = []
        if trips is None:
            span = arith.SubiOp(loop.ub, loop.lb)
            count = arith.CeilDivSIOp(span, loop.step)
            made += [span, count]
            upper: SSAValue = count.result
        else:
            made.append(bound := arith.ConstantOp.from_int_and_width(trips, IndexType()))
            upper = bound.result
        zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        one = arith.ConstantOp.from_int_and_width(1, IndexType())
        uses = list(j.uses)
        scaled = arith.MuliOp(j, loop.step)
        iv = arith.AddiOp(scaled, loop.lb)
        for op in (*made, zero, one, scaled, iv):
            op.location = loop.location
        Rewriter.insert_op([*made, zero, one], InsertPoint.before(loop))
        Rewriter.insert_op([scaled, iv], InsertPoint.at_start(loop.body.block))
        for use in uses:
            use.operation.operands[use.index] = iv.result
        loop.operands[0], loop.operands[1], loop.operands[2] = zero.result, upper, one.result
        done += 1
    return done


Range = tuple[int, int]
_LIMIT = 1 << 62
"""Index ranges past this are not trusted (index arithmetic wraps at 64 bits; an
integer's at its width)."""


def index_range(value: SSAValue, depth: int = 0) -> Range | None:
    """[lo, hi] holding every value `value` takes in any execution, from constants, loop
    bounds and +, -, *; None where unknown or where the arithmetic may wrap."""
    owner = value.owner
    if depth > 64:
        return None
    if isinstance(value, BlockArgument):
        loop = owner.parent_op() if isinstance(owner, Block) else None
        if not isinstance(loop, scf.ForOp) or value.index != 0:
            return None
        lb, ub = index_range(loop.lb, depth + 1), index_range(loop.ub, depth + 1)
        return None if lb is None or ub is None else (lb[0], max(lb[0], ub[1] - 1))
    if isinstance(owner, arith.ConstantOp):
        c = const_int(value)
        return None if c is None else (c, c)
    if isinstance(owner, arith.IndexCastOp | arith.ExtSIOp):
        return index_range(owner.operands[0], depth + 1)  # a range of its width's: kept
    if not isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        return None
    a, b = (index_range(v, depth + 1) for v in owner.operands)
    if a is None or b is None:
        return None
    if isinstance(owner, arith.AddiOp):
        out = (a[0] + b[0], a[1] + b[1])
    elif isinstance(owner, arith.SubiOp):
        out = (a[0] - b[1], a[1] - b[0])
    else:
        products = [x * y for x in a for y in b]
        out = (min(products), max(products))
    t = value.type
    bound = 1 << (t.width.data - 1) if isinstance(t, IntegerType) else _LIMIT
    return out if -bound <= out[0] and out[1] < bound else None  # else it may wrap


def _linear(value: SSAValue) -> tuple[dict[SSAValue, int], int]:
    """`value` as constant + sum of coefficient x value over the index values it adds,
    subtracts and scales by constants (a value it cannot see into, a cast of narrower
    arithmetic among them, is one term of its own)."""
    owner = value.owner
    c = const_int(value) if isinstance(owner, arith.ConstantOp) else None
    if c is not None:
        return {}, c
    if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp) and isinstance(
            value.type, IndexType):  # fmt: skip
        (ta, ca), (tb, cb) = (_linear(v) for v in owner.operands)
        if isinstance(owner, arith.MuliOp):
            if ta and tb:
                return {value: 1}, 0
            terms, k, scale = (ta, ca, cb) if not tb else (tb, cb, ca)
            return {v: n * scale for v, n in terms.items()}, k * scale
        sign = 1 if isinstance(owner, arith.AddiOp) else -1
        terms = dict(ta)
        for v, n in tb.items():
            terms[v] = terms.get(v, 0) + sign * n
        return terms, ca + sign * cb
    return {value: 1}, 0


def _disjoint(a: Sequence[SSAValue], b: Sequence[SSAValue]) -> bool:
    """Whether two index tuples of one buffer, evaluated in one execution of the code
    around both, never name the same element: in some dimension their difference, as a
    sum over the values it depends on (a value both use cancels: it holds one value
    there, as LLVM's BasicAA subtracts two GEPs), has a range (`index_range`) without 0."""
    for x, y in zip(a, b, strict=True):
        (tx, cx), (ty, cy) = _linear(x), _linear(y)
        terms = dict(tx)
        for v, n in ty.items():
            terms[v] = terms.get(v, 0) - n
        lo = hi = cx - cy
        for v, n in terms.items():
            r = index_range(v) if n else (0, 0)
            if r is None:
                break
            lo, hi = lo + min(n * r[0], n * r[1]), hi + max(n * r[0], n * r[1])
        else:
            if lo > 0 or hi < 0:
                return True
    return False


def _touches(op: Operation, buffer: SSAValue, indices: Sequence[SSAValue],
             writes: bool = False) -> bool:  # fmt: skip
    """Whether `op` (or an op inside it) may access (`writes`: write) `buffer[indices]`:
    a load or store of it at indices not proven disjoint, any other use of it, a call."""
    for inner in op.walk():
        if isinstance(inner, func.CallOp):  # the callee may reach it (a global)
            return True
        if buffer not in inner.operands:
            continue
        if isinstance(inner, memref.LoadOp | memref.StoreOp) and inner.memref is buffer and (
                not isinstance(inner, memref.StoreOp) or inner.value is not buffer):  # fmt: skip
            if isinstance(inner, memref.LoadOp) and writes:
                continue
            if _disjoint(inner.indices, indices):
                continue
        return True
    return False


def _inside(value: SSAValue, loop: scf.ForOp) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is not None and loop.is_ancestor(op)


def _only_accessed(buffer: SSAValue) -> bool:
    """Whether every use of `buffer` loads or stores its elements: no other value (a cast,
    a view, a callee's argument) may name them."""
    return all(isinstance(u.operation, memref.LoadOp)
               or isinstance(u.operation, memref.StoreOp) and u.index == 1  # not the value
               for u in buffer.uses)  # fmt: skip


def _promote(loop: scf.ForOp, first: memref.LoadOp) -> scf.ForOp | None:
    """`loop` rebuilt carrying the element `first` loads, when it is safe
    (`promote_accumulators`); None where it is not."""
    body, buffer, indices = loop.body.block, first.memref, tuple(first.indices)
    if ((trip_count(loop) or 0) < 1 or not _only_accessed(buffer)
            or any(_inside(i, loop) for i in (buffer, *indices))):  # fmt: skip
        return None
    element = [o for o in body.ops if isinstance(o, memref.LoadOp | memref.StoreOp)
               and o.memref is buffer and tuple(o.indices) == indices]  # fmt: skip
    if element[0] is not first or not any(isinstance(o, memref.StoreOp) for o in element):
        return None
    if any(o not in element and _touches(o, buffer, indices) for o in body.ops):
        return None
    value: SSAValue = body.insert_arg(first.res.type, len(body.args))
    for op in element:
        if isinstance(op, memref.LoadOp):
            Rewriter.replace_op(op, [], [value])
        else:
            value = op.value
            Rewriter.erase_op(op)
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    yield_op.operands = (*yield_op.operands, value)
    before = memref.LoadOp.get(buffer, list(indices))
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, before.res],
                    loop.detach_region(loop.body))  # fmt: skip
    after = memref.StoreOp.get(new.results[-1], buffer, list(indices))
    for op in (before, new, after):
        op.location = loop.location
    new.attributes.update(loop.attributes)
    Rewriter.insert_op([before, new, after], InsertPoint.before(loop))
    Rewriter.replace_op(loop, [], new.results[:-1])
    return new


def _forward(load: memref.LoadOp) -> bool:
    """`load` replaced by the value a store just before it in its block put there, when
    nothing between may write it (GVN's store-to-load forwarding)."""
    if not _only_accessed(load.memref):
        return False
    op = load.prev_op
    while op is not None:
        if (isinstance(op, memref.StoreOp) and op.memref is load.memref
                and tuple(op.indices) == tuple(load.indices)):  # fmt: skip
            Rewriter.replace_op(load, [], [op.value])
            return True
        if _touches(op, load.memref, load.indices, writes=True):
            return False
        op = op.prev_op
    return False


def promote_accumulators(module: ModuleOp, f: func.FuncOp) -> int:
    """An element of a buffer that an `scf.for` (of at least one iteration) reads first and
    writes, at indices defined outside it, kept in a register through the loop: loaded
    before it, carried as an iter_arg, stored after it, when every other access of the
    buffer in the loop is at indices that never equal the element's (`_disjoint`: LICM's
    scalar promotion under BasicAA's proof); then each load takes the value a store just
    before it in its block wrote (GVN's store-to-load forwarding). Returns how many loops
    it rewrote.

    Why: `M[x] = 0; for k: M[x] += M[a + k] * M[b + k]` (every conv and pool of alexnet
    and lenet, whose arrays are parts of one M) becomes `acc = 0; for k: acc += ...;
    M[x] = acc`, as -O3 compiles it when it can tell M[x] from the M[a + k]. The zero is
    then a constant carried into the loop, no longer read back from M[x]: Enzyme-MLIR
    0.0.16's missing reverse of the store of a constant (test_enzyme_mlir_bugs.py) then
    costs nothing, as the final store's reverse has zeroed the shadow of M[x] already.
    Every value keeps its bits: the loads replaced read what the register holds."""
    done = 0
    loops = [op for op in f.walk() if isinstance(op, scf.ForOp)]
    for loop in reversed(loops):  # innermost first: a walk lists a loop before its inner ones
        while loop is not None:
            loads = [o for o in loop.body.block.ops if isinstance(o, memref.LoadOp)]
            loop = next((new for o in loads if (new := _promote(loop, o))), None)
            done += loop is not None
    for load in [o for o in f.walk() if isinstance(o, memref.LoadOp)]:
        _forward(load)
    return done


STEPS = (inline_calls, normalize_steps, promote_accumulators)
"""LLVM's passes before Enzyme, as Enzyme-MLIR's input gets them, in order (module doc)."""


def prepared(module: ModuleOp, name: str) -> ModuleOp:
    """A copy of `module` whose function `@name` went through `STEPS`."""
    copy = module.clone()
    f = next(g for g in copy.ops if isinstance(g, func.FuncOp) and g.sym_name.data == name)
    for step in STEPS:
        step(copy, f)
    return copy
