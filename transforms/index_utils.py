"""Index arithmetic and loop helpers shared by the TapeFlow tape transforms.

`IndexBuilder` emits `index` arithmetic before an insertion point and folds constants, so
that the records, layers and tiles of loops with constant bounds print as constants. Only
ops that xDSL's stock interpreter runs are emitted (`arith.addi/subi/muli/divsi/cmpi/select`,
no `minsi`/`ceildivsi`), and every value stays in the `index` type.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary, WeakValueDictionary

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.transforms.analysis.constants import const_int, trip_count

LOOP_ATTR = "tapeflow.loop"
"""The discardable attribute that ties a forward loop to its reverse loop (CONTRACTS.md)."""


class IndexBuilder:
    """Emits folded `index` arithmetic at an insertion point."""

    def __init__(self, point: InsertPoint):
        self.point = point
        self.created: list[Operation] = []

    def _insert(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, self.point)
        self.created.append(op)
        return op.results[0]

    def prune(self) -> None:
        """Erases the ops this builder made that ended up unused (folded-away constants)."""
        for op in reversed(self.created):
            if op.parent is not None and all(not r.uses for r in op.results):
                Rewriter.erase_op(op)
        self.created.clear()

    def const(self, value: int) -> SSAValue:
        """An index constant, hoisted to the top of the enclosing function (and reused)."""
        entry = _entry_block(self.point.block)
        if entry is None:
            return self._insert(arith.ConstantOp(IntegerAttr(value, IndexType())))
        cache = _CONSTANTS.setdefault(entry, WeakValueDictionary())
        known = cache.get(value)
        if known is not None and known.parent is entry:
            return known.results[0]
        op = arith.ConstantOp(IntegerAttr(value, IndexType()))
        Rewriter.insert_op(op, InsertPoint.at_start(entry))
        cache[value] = op
        return op.results[0]

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(ca + cb)
        if ca == 0:
            return b
        if cb == 0:
            return a
        return self._insert(arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(ca - cb)
        if cb == 0:
            return a
        return self._insert(arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(ca * cb)
        if ca == 1:
            return b
        if cb == 1:
            return a
        if ca == 0 or cb == 0:
            return self.const(0)
        return self._insert(arith.MuliOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """Division of a non-negative `a` by a positive `b` (the only use callers make:
        normalized iterations, layer numbers; a negative trip-count numerator is clamped to
        0 afterwards either way). A power-of-two constant divisor becomes a shift."""
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(ca // cb)
        if cb == 1:
            return a
        if cb is not None and cb > 1 and cb & (cb - 1) == 0:
            return self._insert(arith.ShRSIOp(a, self.const(cb.bit_length() - 1)))
        return self._insert(arith.DivSIOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(min(ca, cb))
        lt = self._insert(arith.CmpiOp(a, b, "slt"))
        return self._insert(arith.SelectOp(lt, a, b))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(max(ca, cb))
        gt = self._insert(arith.CmpiOp(a, b, "sgt"))
        return self._insert(arith.SelectOp(gt, a, b))

    def ceildiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """ceil(a / b) for a >= 0, b > 0."""
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            return self.const(-(-ca // cb))
        if cb == 1:
            return a
        return self.div(self.sub(self.add(a, b), self.const(1)), b)

    def trip_count(self, loop: scf.ForOp) -> SSAValue:
        """max(0, ceil((ub - lb) / step)): the number of iterations `loop` runs."""
        lb, ub, step = loop.lb, loop.ub, loop.step
        known = trip_count(loop)
        if known is not None:
            return self.const(known)
        return self.max(self.ceildiv(self.sub(ub, lb), step), self.const(0))

    def normalized_iv(self, loop: scf.ForOp) -> SSAValue:
        """(iv - lb) / step: the 0-based iteration number, inside `loop`'s body."""
        iv = loop.body.block.args[0]
        return self.div(self.sub(iv, loop.lb), loop.step)


def nest_level_index(
    index: SSAValue | None, loop: scf.ForOp, size: SSAValue, reverse: bool
) -> SSAValue:
    """`index * size + it` for the current iteration `it` of `loop` (a row-major index one
    loop deeper; `it` alone when `index` is None), inside `loop`'s body.

    `it` is the normalized iteration `(iv - lb) / step` of a forward loop, or
    `size - 1 - (k - lb) / step` (the primal iteration the reverse loop's counter `k`
    stands for) of a reverse loop. Everything that does not change with the iteration is
    computed right before `loop`, so that a unit-step loop pays one add (forward:
    `(index * size - lb) + iv`) or one subtract (reverse: `(index * size + size - 1 + lb)
    - k`) per iteration, and nothing when that folds to the induction variable itself.
    """
    pre = IndexBuilder(InsertPoint.before(loop))
    base = pre.const(0) if index is None else pre.mul(index, size)
    return offset_level_index(base, loop, size, reverse, pre)


def offset_level_index(
    base: SSAValue, loop: scf.ForOp, size: SSAValue, reverse: bool, pre: IndexBuilder | None = None
) -> SSAValue:
    """`base + it` for the current iteration `it` of `loop` (see `nest_level_index`), with
    `base` defined before `loop` (a ragged nest's running offset, for instance)."""
    pre = pre or IndexBuilder(InsertPoint.before(loop))
    body = IndexBuilder(InsertPoint.at_start(loop.body.block))
    iv = loop.body.block.args[0]
    if const_int(loop.step) == 1:
        if reverse:
            # n - 1 - (k - lb) = (n - 1 + lb) - k
            offset = pre.add(pre.add(base, pre.sub(size, pre.const(1))), loop.lb)
            return body.sub(offset, iv)
        return body.add(pre.sub(base, loop.lb), iv)
    it = body.normalized_iv(loop)
    if reverse:
        it = body.sub(body.sub(size, body.const(1)), it)
    return body.add(base, it)


_CONSTANTS: WeakKeyDictionary[Block, WeakValueDictionary[int, Operation]] = WeakKeyDictionary()
"""Index constants hoisted into each function's entry block, by value. Both sides weak: a
constant op refers to its block, so a strong value would keep the block as a key, and with
it every module a pass ever ran on."""


def _entry_block(block: Block | None) -> Block | None:
    """The entry block of the `func.func` that contains `block`."""
    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, func.FuncOp):
        op = op.parent_op()
    if op is None:
        return None
    return op.body.first_block


def prune_constants(module: Operation) -> None:
    """Erases the hoisted index constants of `module`'s functions that ended up unused."""
    for op in module.walk():
        if isinstance(op, func.FuncOp) and op.body.first_block is not None:
            cache = _CONSTANTS.get(op.body.first_block, {})
            for value, const in list(cache.items()):
                if const.parent is not None and not const.results[0].uses:
                    Rewriter.erase_op(const)
                    del cache[value]


def erase_dead(value: SSAValue) -> None:
    """Erases the pure index arithmetic that computed `value` once nothing uses it.

    Call it only once no `IndexBuilder` holds a value still to be used: the chain may
    contain a hoisted constant a builder handed out (the same op for every use of that
    value), and erasing it would leave the later user with an erased operand."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent is None:
        return
    if owner.name not in _PURE_INDEX_OPS or any(r.uses for r in owner.results):
        return
    operands = list(owner.operands)
    Rewriter.erase_op(owner)
    for operand in operands:
        erase_dead(operand)


_PURE_INDEX_OPS = frozenset(
    {
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.divsi",
        "arith.remsi",
        "arith.cmpi",
        "arith.select",
        "arith.constant",
        "arith.ceildivsi",
        "arith.floordivsi",
        "arith.maxsi",
        "arith.minsi",
    }
)


def check_steps(root: Operation) -> None:
    """Rejects an `scf.for` whose step is a constant <= 0.

    Upstream MLIR requires a positive step (SCFOps.td: "required to be positive"); its
    verifier once said "constant step operand must be positive" and mlir-opt 22 accepts
    the op, leaving such a loop undefined at run time. Every TapeFlow pass that reverses
    or strip-mines a loop divides by the step to count its iterations, so the passes run
    this check before changing anything and name the loop instead of dividing by zero.
    """
    for op in root.walk():
        if isinstance(op, scf.ForOp):
            step = const_int(op.step)
            if step is not None and step <= 0:
                raise PassFailedException(
                    op_error(
                        op,
                        f"constant step operand must be positive, got {step}: the loop's "
                        "trip count is undefined",
                    )
                )


def loop_id(op: Operation) -> int | None:
    """The `tapeflow.loop` id of an `scf.for`, or None."""
    attr = op.attributes.get(LOOP_ATTR)
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return None


def defined_outside(value: SSAValue, op: Operation) -> bool:
    """True when `value` is defined outside `op` (so it dominates `op` if `op` uses it)."""
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        return parent is None or not op.is_ancestor(parent)
    return not op.is_ancestor(owner)
