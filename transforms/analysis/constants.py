"""Integer constants of SSA values and loop trip counts, the one rule for each.

`const_int` reads an `arith.constant` only; `fold_int` also folds the integer ops between
constants by their semantics (`tapeflow.semantics`: wrapping at the result's width, a
division by zero no constant). `trip_count` counts a loop's iterations from either: the
passes that emit index arithmetic read literal constants (what they print stays what the
IR says), the Enzyme-layout lowering and the min-cut's weights fold.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

from tapeflow import semantics

_FOLDABLE = {  # integer ops folded by their semantics (wrapping at the result's width)
    "arith.addi": lambda a, b, w: semantics.wrap(a + b, w),
    "arith.subi": lambda a, b, w: semantics.wrap(a - b, w),
    "arith.muli": lambda a, b, w: semantics.wrap(a * b, w),
    **{name: semantics.SCALARS[name].fn for name in (
        "arith.maxsi", "arith.minsi", "arith.divsi", "arith.divui", "arith.ceildivsi",
        "arith.floordivsi", "arith.remsi", "arith.remui")},
}  # fmt: skip


_CMPI = {  # arith.cmpi predicates on signed (index) values
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    2: lambda a, b: a < b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a >= b,
}


def const_int(value: SSAValue) -> int | None:
    """The integer of an `arith.constant` of integer/index type, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def fold_int(value: SSAValue, depth: int = 0) -> int | None:
    """The integer `value` always holds, if it folds from constants; else None."""
    op = value.owner
    if not isinstance(op, Operation) or depth > 32:
        return None
    if isinstance(op, arith.ConstantOp):
        return const_int(value)
    if isinstance(op, arith.IndexCastOp):
        return fold_int(op.input, depth + 1)
    if isinstance(op, arith.SelectOp):
        cond = fold_int(op.cond, depth + 1)
        if cond is None:
            return None
        return fold_int(op.lhs if cond else op.rhs, depth + 1)
    if isinstance(op, arith.CmpiOp):
        a = fold_int(op.lhs, depth + 1)
        b = fold_int(op.rhs, depth + 1)
        predicate = _CMPI.get(op.predicate.value.data)
        if a is None or b is None or predicate is None:
            return None
        return int(predicate(a, b))
    fold = _FOLDABLE.get(op.name)
    if fold is not None:
        a = fold_int(op.operands[0], depth + 1)
        b = fold_int(op.operands[1], depth + 1)
        t = op.results[0].type
        w = 64 if isinstance(t, IndexType) else t.width.data
        if a is None or b is None:
            return None
        try:
            return fold(a, b, w)
        except semantics.Guard:  # a division by zero: not a constant
            return None
    return None


def trip_count(loop: scf.ForOp, fold: bool = False) -> int | None:
    """max(0, ceil((ub - lb) / step)) when the bounds and the (positive) step are constants
    (`fold`: constants after folding, `fold_int`), else None."""
    value = fold_int if fold else const_int
    lb, ub, step = value(loop.lb), value(loop.ub), value(loop.step)
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return max(0, -(-(ub - lb) // step))
