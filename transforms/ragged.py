"""Ragged region nests: loops whose inner trip counts vary with an outer iteration.

A triangular nest (`for i: for j in i+1..n`) writes a different number of records in each
outer iteration, so a record's index cannot be the row-major linearisation of the
iteration numbers. Its records are indexed by a *running offset* instead: the number of
records the nest wrote before the current run of its inner loops.

Shape
-----
A nest `loops[0..d]` (outermost first) is ragged when it splits, at a level `q`, into
- a rectangular *prefix* `loops[0..q]`: every bound of `loops[1..q]` is defined outside
  `loops[0]` (as for any rectangular region), and
- a *box* `loops[q+1..d]`: no bound of a box loop is defined inside `loops[q+1]` (so, at
  each prefix iteration, the box is rectangular: `S(o)` records, the product of its trip
  counts), and every box bound defined inside `loops[0]` is pure `arith` computed from
  the prefix's induction variables and values defined outside the nest only.
Triangular solves, triangular mat-vecs, gem5-SALAM's gravity (`q = 0`, a one-loop box) and
LU's `for k: for i > k: for j > k` (a two-loop box) have this shape; a bound that varies
with another box loop (`for i: for j < i: for k < j`) or that is computed from memory or
loop-carried values does not, and the nest keeps Enzyme's layout with a remark saying so.

Offsets: a small tape computed before the forward sweep
-------------------------------------------------------
Record `(o, box iteration)` sits at `off[o] + rowmajor(box iteration)`, where `o` is the
row-major index of the prefix iteration and `off[o] = S(0) + ... + S(o-1)`. `off` is a
`memref<N_o x index>` (`N_o` prefix iterations), filled right before the forward nest by a
copy of the prefix loops that evaluates only the box bounds (their pure arithmetic, cloned)
and carries the running sum; the sum after the last iteration is the tape's record count,
which the allocation needs before the forward sweep writes anything. (When every bound is a
constant the count is folded at compile time: `iterations`.) The forward and the reverse
sweep each load `off[o]` once per prefix iteration, before the box.

Why a table and not the running offset of the forward sweep, or a closed form: the count
must be known when the tape is allocated, i.e. before the forward sweep, so the sums are
computed first anyway; keeping them costs `N_o` index words (256 for gravity's 32,640
records) and makes each record's index a pure function of the induction variables, as in
a rectangular nest: the reverse sweep, a checkpointed re-run of the forward sweep or a
tile split anywhere all find a record without replaying a counter, and no closed form of
a clamped, stepped affine sum (`max(0, ceildiv(ub(i) - lb(i), step))` summed over `i`)
has to be derived and trusted for each bound shape.

Layers and tiles (`tapeflow-layers`, `tapeflow-stream`) cut the record range of a ragged
region, not its outer iterations: a tile is `K` consecutive records, and each run of the
innermost loop is split into *pieces* at tile boundaries (a boundary may fall inside an
outer iteration). `value_at` gives a piece the index of its first record.
"""

from __future__ import annotations

from tapeflow.transforms.analysis.constants import const_int
from tapeflow.transforms.index_utils import (
    IndexBuilder,
    defined_outside,
    nest_level_index,
    offset_level_index,
)
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

RAGGED_ATTR = "tapeflow.ragged"
"""Unit attribute on the `region.alloc` of a ragged region, and on its layer loops."""

MAX_ENUMERATED = 1 << 20
"""Most prefix iterations `iterations` walks to count a ragged nest's records."""

_PURE = {
    "arith.constant": None,
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None,
    "arith.remsi": lambda a, b: a - b * int(a / b) if b else None,
    "arith.ceildivsi": lambda a, b: -(-a // b) if b else None,
    "arith.floordivsi": lambda a, b: a // b if b else None,
    "arith.shrsi": lambda a, b: a >> b,
    "arith.maxsi": max,
    "arith.minsi": min,
    "arith.index_cast": lambda a: a,
    "arith.select": lambda c, a, b: a if c else b,
    "arith.cmpi": None,
}
"""The ops a ragged bound may be computed with, and their value on Python ints."""

_CMP = {0: int.__eq__, 1: int.__ne__, 2: int.__lt__, 3: int.__le__, 4: int.__gt__, 5: int.__ge__}


def _bounds(loop: scf.ForOp) -> tuple[SSAValue, SSAValue, SSAValue]:
    return (loop.lb, loop.ub, loop.step)


def _slice(value: SSAValue, outer: Operation, ivs: set[SSAValue], ops: list[Operation]) -> bool:
    """Appends to `ops` (in dependence order) the ops inside `outer` that compute `value`;
    False unless they are pure arithmetic of `ivs` and values defined outside `outer`."""
    if defined_outside(value, outer) or value in ivs:
        return True
    owner = value.owner
    if isinstance(owner, Block) or owner.name not in _PURE or owner.regions:
        return False
    if owner in ops:
        return True
    if not all(_slice(v, outer, ivs, ops) for v in owner.operands):
        return False
    ops.append(owner)
    return True


def ragged_split(fwd: list[scf.ForOp]) -> int | tuple[str, SSAValue] | None:
    """The split level `q` of a ragged nest (module docstring), None for a rectangular
    nest, or why the nest has neither shape: a message with `{}` for the bound at fault,
    and that bound."""
    outer = fwd[0]
    q = 0
    while q + 1 < len(fwd) and all(defined_outside(b, outer) for b in _bounds(fwd[q + 1])):
        q += 1
    if q == len(fwd) - 1:
        return None
    box, ivs = fwd[q + 1 :], {loop.body.block.args[0] for loop in fwd[: q + 1]}
    for loop in box:
        for bound in _bounds(loop):
            if not defined_outside(bound, box[0]):
                return (
                    "bound '{}' of an inner loop varies with another inner loop's "
                    "iteration (a ragged nest's inner loops must be rectangular)",
                    bound,
                )
            if not _slice(bound, outer, ivs, []):
                return (
                    "bound '{}' of an inner loop is not computed from the outer induction "
                    "variables alone (memory or loop-carried values)",
                    bound,
                )
    return q


def evaluate(value: SSAValue, env: dict[SSAValue, int]) -> int | None:
    """`value` on Python ints, given the induction variables in `env`; None if unknown."""
    if value in env:
        return env[value]
    known = const_int(value)
    if known is not None:
        return known
    owner = value.owner
    if isinstance(owner, Block) or owner.name not in _PURE or owner.name == "arith.constant":
        return None
    args = [evaluate(v, env) for v in owner.operands]
    if any(a is None for a in args):
        return None
    if isinstance(owner, arith.CmpiOp):
        return int(_CMP[owner.predicate.value.data](args[0], args[1]))  # type: ignore[arg-type]
    return _PURE[owner.name](*args)  # type: ignore[misc]


def iterations(loops: list[scf.ForOp]) -> int | None:
    """Iterations of the innermost body of the nest `loops` (outermost first), each loop
    directly inside the previous, when every bound evaluates to a constant given the outer
    induction variables (a ragged nest's record count); None otherwise."""
    budget = [MAX_ENUMERATED]

    def count(level: int, env: dict[SSAValue, int]) -> int | None:
        loop = loops[level]
        lb, ub, step = (evaluate(b, env) for b in _bounds(loop))
        if lb is None or ub is None or step is None or step <= 0:
            return None
        n = max(0, -(-(ub - lb) // step))
        if level == len(loops) - 1:
            return n
        budget[0] -= n
        if budget[0] < 0:
            return None
        total = 0
        for k in range(n):
            env[loop.body.block.args[0]] = lb + k * step
            inner = count(level + 1, env)
            if inner is None:
                return None
            total += inner
        return total

    return count(0, {}) if loops else None


def _trip(ib: IndexBuilder, lb: SSAValue, ub: SSAValue, step: SSAValue) -> SSAValue:
    return ib.max(ib.ceildiv(ib.sub(ub, lb), step), ib.const(0))


def offsets_table(
    fwd: list[scf.ForOp], q: int, sizes: list[SSAValue]
) -> tuple[SSAValue, SSAValue]:
    """Emits, right before `fwd[0]`, the offsets table of the ragged nest `fwd` split at
    `q` (`sizes`: the prefix trip counts, defined before `fwd[0]`) and the loop that fills
    it; returns the table and the total record count."""
    point = InsertPoint.before(fwd[0])
    ib = IndexBuilder(point)
    count: SSAValue = sizes[0]
    for size in sizes[1:]:
        count = ib.mul(count, size)
    index = IndexType()
    static = const_int(count)
    if static is not None:
        table = memref.AllocOp.get(index, shape=[max(static, 1)])
    else:
        size = ib.max(count, ib.const(1))
        table = memref.AllocOp.get(index, shape=[DYNAMIC_INDEX], dynamic_sizes=[size])
    Rewriter.insert_op(table, point)

    prefix, box = fwd[: q + 1], fwd[q + 1 :]
    # The prefix copies, each carrying the running sum, built outermost first.
    blocks = [Block(arg_types=[index, index]) for _ in prefix]
    copies: list[scf.ForOp] = []
    for depth, (loop, block) in enumerate(zip(prefix, blocks)):
        init = ib.const(0) if depth == 0 else blocks[depth - 1].args[1]
        copies.append(scf.ForOp(loop.lb, loop.ub, loop.step, [init], block))
    for outer_block, copy in zip(blocks, copies[1:]):
        outer_block.add_ops([copy, scf.YieldOp(copy.results[0])])
    Rewriter.insert_op(copies[0], point)

    # Innermost copy: off[o] = sum so far; the sum grows by the box's records S(o).
    mapping = {loop.body.block.args[0]: block.args[0] for loop, block in zip(prefix, blocks)}
    ops: list[Operation] = []
    for loop in box:
        for bound in _bounds(loop):
            _slice(bound, fwd[0], set(mapping), ops)
    inner = IndexBuilder(InsertPoint.at_end(blocks[-1]))
    for op in ops:
        Rewriter.insert_op(op.clone(value_mapper=mapping), inner.point)
    o: SSAValue | None = None
    for loop, block, size in zip(prefix, blocks, sizes):
        it = inner.div(inner.sub(block.args[0], loop.lb), loop.step)
        o = it if o is None else inner.add(inner.mul(o, size), it)
    records: SSAValue = inner.const(1)
    for loop in box:
        lb, ub, step = (mapping.get(b, b) for b in _bounds(loop))
        records = inner.mul(records, _trip(inner, lb, ub, step))
    assert o is not None
    acc = blocks[-1].args[1]
    Rewriter.insert_op(memref.StoreOp.get(acc, table, [o]), inner.point)
    blocks[-1].add_op(scf.YieldOp(inner.add(acc, records)))
    return table.memref, copies[0].results[0]


def ragged_index(
    loops: list[scf.ForOp],
    q: int,
    prefix_index: SSAValue,
    table: SSAValue,
    reverse: bool,
) -> SSAValue:
    """The record index of the current iteration of the ragged nest `loops` (forward, or
    the reverse nest standing for the primal iterations) split at `q`: `off[o]` loaded
    before the box, plus the box iteration's row-major index (`prefix_index` = `o`)."""
    box = loops[q + 1 :]
    load = memref.LoadOp.get(table, [prefix_index])
    Rewriter.insert_op(load, InsertPoint.before(box[0]))
    index: SSAValue | None = None
    for loop in box[:-1]:
        size = IndexBuilder(InsertPoint.before(loop)).trip_count(loop)
        index = nest_level_index(index, loop, size, reverse)
    last = IndexBuilder(InsertPoint.before(box[-1]))
    size = last.trip_count(box[-1])
    base = load.res if index is None else last.add(load.res, last.mul(index, size))
    index = offset_level_index(base, box[-1], size, reverse, last)
    last.prune()  # the forward index does not need the last trip count
    return index


def value_at(value: SSAValue, loop: scf.ForOp, iv: SSAValue, ib: IndexBuilder) -> SSAValue:
    """`value` (computed in `loop`'s body from its induction variable) for the iteration
    whose induction variable is `iv`, computed by `ib` (before `loop`): the index of a
    piece's first record."""
    body = loop.body.block
    ops: list[Operation] = []
    if not _slice(value, loop, {body.args[0]}, ops):
        raise ValueError(f"record index of {loop.name} is not pure index arithmetic")
    mapping: dict[SSAValue, SSAValue] = {body.args[0]: iv}
    folding = {arith.AddiOp: ib.add, arith.SubiOp: ib.sub, arith.MuliOp: ib.mul}
    for op in ops:
        fold = folding.get(type(op))  # type: ignore[call-overload]
        if fold is not None:
            mapping[op.results[0]] = fold(*(mapping.get(v, v) for v in op.operands))
            continue
        clone = op.clone(value_mapper=mapping)
        Rewriter.insert_op(clone, ib.point)
        ib.created.append(clone)
    return mapping.get(value, value)


def shifted(index: SSAValue, loop: scf.ForOp, shift: SSAValue, user: Operation) -> SSAValue:
    """`index - shift` for `user` in `loop`'s body, `shift` defined before `loop`: folded
    into the loop-invariant operand of `index`'s add (or subtract) when it has one, so that
    a tile's record position costs nothing more per iteration than the record index."""
    ib = IndexBuilder(InsertPoint.before(loop))
    owner = index.owner
    new: Operation | None = None
    if isinstance(owner, arith.AddiOp):
        a, b = owner.lhs, owner.rhs
        if defined_outside(a, loop):
            new = arith.AddiOp(ib.sub(a, shift), b)
        elif defined_outside(b, loop):
            new = arith.AddiOp(a, ib.sub(b, shift))
    elif isinstance(owner, arith.SubiOp) and defined_outside(owner.lhs, loop):
        new = arith.SubiOp(ib.sub(owner.lhs, shift), owner.rhs)
    if new is None:
        new = arith.SubiOp(index, shift)
    Rewriter.insert_op(new, InsertPoint.before(user))
    return new.results[0]
