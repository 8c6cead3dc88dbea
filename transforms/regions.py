"""`tapeflow-regions`: one record per region instance instead of one cache per value.

The autodiff IR (docs/CONTRACTS.md) keeps every value the reverse sweep needs in its own
`!tape.cache<T>` (Enzyme's struct of arrays). This pass groups the caches that one
*instance of a region* pushes, and replaces them by one `!region.tape<!region.record<...>>`
(an array of structs): the forward instance writes its whole record once, the matching
reverse instance reads it once.

Regions and instances
---------------------
A cache qualifies when it has exactly one `tape.push`, exactly one `tape.pop` (and any
number of `tape.free`), and every op between the push and the function body is an
`scf.for` carrying `tapeflow.loop` (likewise for the pop), with the same list of
`tapeflow.loop` ids from the outside in on both sides. The push then runs exactly once per
iteration of its loop nest, and the pop once per iteration of the reverse nest.

Qualifying caches are grouped by (block of the push, *segment* of the push, block of the
pop, segment of the pop), where a segment is a straight-line stretch of a block between
two ops that contain loops. So a group is either one loop iteration's worth of values
(pushes directly in a loop body) or a straight-line stretch between loops (pushes in the
function body, one record in all). Each group becomes one region:

- `region.alloc` right before the outermost forward loop of the nest (before the last
  push for a straight-line region), with `count` = the product of the trip counts;
- one `region.write %tape[%idx], ...` right after the group's last push, where `%idx` is
  the row-major linearisation of the normalized iteration numbers `(iv - lb) / step` of
  the enclosing forward loops (0 for a straight-line region);
- one `region.read %tape[%idx]` right before the group's first pop; in each reverse loop
  (counter `k`, running the primal iterations backwards, as the contract says) the primal
  iteration number is `n - 1 - (k - lb_r) / step_r` with `n` the forward trip count, which
  is the normalized iteration of the primal induction variable the reverse loop recomputes
  (`lb + (n-1-k)*step`); the record index linearises those the same way;
- `region.dealloc` where the caches were freed.

Record layout rule
------------------
The fields of a record are the group's pushed values sorted by *decreasing natural
alignment*, stably (ties keep push order). `!region.record` lays out fields in C struct
order, so this order leaves no padding between fields (alignments are powers of two and
every field size is a multiple of the alignments after it); the only padding is at the end,
up to the record's alignment. Example: pushes f32, f64, i1, index give
`!region.record<f64, index, f32, i1>` (offsets 0, 8, 16, 20; size 24) rather than 32.

Values cached in a branch
-------------------------
A push directly inside an `scf.if` that is directly in a region's loop body (or in the
function body), popped likewise in the reverse sweep, is an *optional field*: the value is
yielded out of the `scf.if` as a new result (the other branch yields a zero of its type)
and written with the rest of the record after the `scf.if`; the reverse read, before the
reverse `scf.if`, dominates the pop it replaces, which runs only where the branch was
taken. Every record keeps the field's slot, taken or not: records stay one size, so their
index, layers and tiles are those of any region, for a few bytes per record (a layout per
branch would need variable-size records and an offset per record, as a ragged nest has,
for the few bytes a branch's values take). Deeper nests of `scf.if` are left alone.

Caches left alone
-----------------
Caches that do not qualify stay `tape.cache` and keep their meaning: several pushes or pops
of one cache, a push in an `scf.while`'s condition region or in a loop inside an
`scf.while`, nested `scf.if`s or any op other than a `tapeflow.loop` `scf.for` or the
innermost `scf.while` (below), forward and reverse nests with different
`tapeflow.loop` ids, inner-loop bounds that vary with an outer iteration in a way a ragged
region does not cover (below), or a reverse sweep the allocation point would not dominate.
`tapeflow-lower-regions` (or `tapeflow-lower-tape`) lowers them later.

Ragged nests
------------
When inner-loop bounds vary with an outer iteration (a triangular nest), the nest is
*ragged* (`tapeflow.transforms.ragged`): the tape gets `tapeflow.ragged`, its count is
the nest's number of records (a constant when every bound is one), and record indices are
running offsets `off[o] + rowmajor(inner iteration)`, with `off` a small `memref<index>`
table of the records before each outer iteration, filled right before the forward nest
(the `ragged` module says why this choice). The table is deallocated with the tape.

While loops
-----------
Values pushed directly in the body (`after` block) of an `scf.while`, the innermost loop
of a rectangular nest (or of none), get one record per iteration in a *growable* DRAM
record tape (`tapeflow.transforms.while_regions`): indexed by running offsets like a
ragged nest, but the offsets are stored by the forward sweep as each while ends, and each
write first reserves room for its record (`region.reserve`, doubling). The tape carries
`tapeflow.growable`; layers and tiles cut its record range as a ragged region's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from tapeflow.dialects import region, tape
from tapeflow.transforms.analysis.remarks import cache_remark, describe, remark
from tapeflow.transforms.index_utils import (
    IndexBuilder,
    check_steps,
    defined_outside,
    loop_id,
    nest_level_index,
    prune_constants,
)
from tapeflow.transforms.while_regions import (
    FIRST_CAPACITY,
    GROWABLE_ATTR,
    counted_while,
    forward_index,
    offsets_cell,
    reverse_index,
)
from tapeflow.transforms.analysis.constants import const_int
from tapeflow.transforms.ragged import (
    RAGGED_ATTR,
    iterations,
    offsets_table,
    ragged_index,
    ragged_split,
)
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter


@dataclass
class CacheUse:
    """The ops that use one `tape.cache`."""

    init: tape.InitOp
    push: tape.PushOp
    pop: tape.PopOp
    frees: list[tape.FreeOp]
    order: int
    """Position of the push in the function (walk order): the stable tie-breaker."""


@dataclass
class RegionGroup:
    """Caches pushed by one region instance, with the loop nests that run them."""

    caches: list[CacheUse] = field(default_factory=list[CacheUse])
    fwd_loops: list[scf.ForOp] = field(default_factory=list[scf.ForOp])
    rev_loops: list[scf.ForOp] = field(default_factory=list[scf.ForOp])
    in_dram: bool = False
    """Keep the tape a DRAM record buffer (`DRAM_ATTR`): not layered nor streamed."""
    split: int | None = None
    """For a ragged nest (`ragged.ragged_split`): the level of its last prefix loop."""
    fn: func.FuncOp | None = None
    """The function of the caches: a branch directly in its body is lifted too (`_lifted`)."""
    while_op: scf.WhileOp | None = None
    """For a while region (`while_regions`): the `scf.while` whose `after` block pushes the
    values; `fwd_loops` are the loops around it, `rev_loops` end with its reverse loop."""


DRAM_ATTR = "tapeflow.dram"
"""Unit attribute on a `region.alloc` that `tapeflow-layers`/`tapeflow-stream` leave in
DRAM (the cost model's "regions only" choice)."""


def _lifted(op: Operation, fn: func.FuncOp) -> Operation:
    """`op`, or the `scf.if` it is directly in when that `scf.if` is directly in a
    `tapeflow.loop` body or the function body (a value cached in a branch)."""
    parent = op.parent_op()
    if isinstance(parent, scf.IfOp):
        outer = parent.parent_op()
        if outer is fn or (isinstance(outer, scf.ForOp) and loop_id(outer) is not None):
            return parent
    return op


def _loop_chain(op: Operation, fn: func.FuncOp) -> list[Operation] | str:
    """Enclosing `tapeflow.loop` loops of `op` (lifted out of one `scf.if`), outermost
    first, or why they do not qualify; the innermost may be an `scf.while` whose `after`
    block holds `op` directly (a while region)."""
    chain: list[Operation] = []
    parent = _lifted(op, fn).parent_op()
    if counted_while(op) is not None:
        assert parent is not None
        chain.append(parent)
        parent = parent.parent_op()
    elif isinstance(parent, scf.WhileOp):
        return "in the condition region of 'scf.while' (it runs once more than the body)"
    while parent is not None and parent is not fn:
        if not isinstance(parent, scf.ForOp) or loop_id(parent) is None:
            return f"inside '{parent.name}'"
        chain.append(parent)
        parent = parent.parent_op()
    chain.reverse()
    return chain


def _contains_loop(op: Operation) -> bool:
    return any(isinstance(o, scf.ForOp | scf.WhileOp) for o in op.walk())


def _segment(op: Operation) -> int:
    """Number of loop-containing ops before `op` in its block."""
    count = 0
    prev = op.prev_op
    while prev is not None:
        if _contains_loop(prev):
            count += 1
        prev = prev.prev_op
    return count


def _classify(init: tape.InitOp, order: dict[Operation, int]) -> CacheUse | str:
    pushes: list[tape.PushOp] = []
    pops: list[tape.PopOp] = []
    frees: list[tape.FreeOp] = []
    for use in init.cache.uses:
        user = use.operation
        if isinstance(user, tape.PushOp) and use.index == 0:
            pushes.append(user)
        elif isinstance(user, tape.PopOp):
            pops.append(user)
        elif isinstance(user, tape.FreeOp):
            frees.append(user)
        else:
            return f"used by '{user.name}'"
    if len(pushes) != 1 or len(pops) != 1:
        return f"{len(pushes)} push(es) and {len(pops)} pop(s)"
    return CacheUse(init, pushes[0], pops[0], frees, order[pushes[0]])


def find_regions(fn: func.FuncOp) -> tuple[list[RegionGroup], dict[tape.InitOp, str]]:
    """The regions of `fn`, and the caches left as they are with the reason."""
    order = {op: i for i, op in enumerate(fn.walk())}
    skipped: dict[tape.InitOp, str] = {}
    groups: dict[tuple[Block | None, int, Block | None, int], RegionGroup] = defaultdict(
        RegionGroup
    )
    for op in fn.walk():
        if not isinstance(op, tape.InitOp):
            continue
        use = _classify(op, order)
        if isinstance(use, str):
            skipped[op] = use
            continue
        fwd = _loop_chain(use.push, fn)
        rev = _loop_chain(use.pop, fn)
        if isinstance(fwd, str) or isinstance(rev, str):
            skipped[op] = f"pushed or popped {fwd if isinstance(fwd, str) else rev}"
            continue
        if [loop_id(lp) for lp in fwd] != [loop_id(lp) for lp in rev]:
            skipped[op] = "forward and reverse loops do not match"
            continue
        push, pop = _lifted(use.push, fn), _lifted(use.pop, fn)
        key = (push.parent_block(), _segment(push), pop.parent_block(), _segment(pop))
        group = groups[key]
        group.fn = fn
        group.caches.append(use)
        if fwd and isinstance(fwd[-1], scf.WhileOp):
            group.while_op = fwd.pop()
        group.fwd_loops, group.rev_loops = fwd, rev  # type: ignore[assignment]

    regions: list[RegionGroup] = []
    for group in groups.values():
        reason = _check_group(group)
        if reason is not None:
            for use in group.caches:
                skipped[use.init] = reason
            continue
        group.caches.sort(key=lambda u: u.order)
        regions.append(group)
    regions.sort(key=lambda g: g.caches[0].order)
    return regions, skipped


def _anchor(group: RegionGroup) -> Operation:
    """The op before which the tape is allocated."""
    if group.fwd_loops:
        return group.fwd_loops[0]
    if group.while_op is not None:
        return group.while_op
    return _last(group, [u.push for u in group.caches])


def _last(group: RegionGroup, ops: list[Operation], first: bool = False) -> Operation:
    """The last (first) of `ops`, lifted out of their `scf.if`s, in their block."""
    assert group.fn is not None
    lifted = [_lifted(op, group.fn) for op in ops]
    pick = min if first else max
    return pick(lifted, key=lambda o: o.parent_block().get_operation_index(o))  # type: ignore[union-attr]


def _check_group(group: RegionGroup) -> str | None:
    if group.fwd_loops:
        split = ragged_split(group.fwd_loops)
        if isinstance(split, tuple):
            reason, bound = split
            return reason.format(describe(bound))
        if split is not None and group.while_op is not None:
            return "the loops around 'scf.while' are a ragged nest"
        group.split = split
        if group.while_op is not None:
            group.split = len(group.fwd_loops) - 1
    anchor = _anchor(group)
    block = anchor.parent_block()
    assert block is not None
    for use in group.caches:
        reader = block.find_ancestor_op_in_block(use.pop)
        if reader is None or reader is anchor or not anchor.is_before_in_block(reader):
            return "the reverse sweep is not after the forward sweep in the same block"
    return None


def _field_order(caches: list[CacheUse]) -> list[CacheUse]:
    """Decreasing alignment, stable: the record layout rule (see the module docstring)."""
    return sorted(caches, key=lambda u: -region.field_size(u.push.value.type))


def _nest_index(
    loops: list[scf.ForOp], sizes: list[SSAValue], reverse: bool, cache: dict
) -> SSAValue:
    """The linear record index of the current iteration of `loops` (outermost first),
    one `nest_level_index` per loop; `cache` shares the prefixes between regions."""
    index: SSAValue | None = None
    for depth, (loop, size) in enumerate(zip(loops, sizes)):
        key = (tuple(loops[: depth + 1]), reverse)
        if key in cache:
            index = cache[key]
            continue
        index = nest_level_index(index, loop, size, reverse)
        cache[key] = index
    assert index is not None
    return index


def _record_index(
    loops: list[scf.ForOp],
    q: int | None,
    sizes: list[SSAValue],
    table: SSAValue | None,
    reverse: bool,
    cache: dict,
    ib: IndexBuilder,
) -> SSAValue:
    """The record index of the current iteration of `loops` (0 out of loops): row-major
    over the iteration numbers, or a ragged nest's running offset (`ragged_index`)."""
    if not sizes:
        return ib.const(0)
    index = _nest_index(loops[: len(sizes)], sizes, reverse, cache)
    if q is None:
        return index
    assert table is not None
    return ragged_index(loops, q, index, table, reverse)


def _rewrite(
    group: RegionGroup, trip_counts: dict[scf.ForOp, SSAValue], cache: dict
) -> region.AllocOp:
    fields = _field_order(group.caches)
    record = region.RecordType([u.push.value.type for u in fields])
    tape_type = region.TapeType(record)
    assert group.fn is not None
    branches: dict[Operation, list[CacheUse]] = {}
    for use in group.caches:
        lifted = _lifted(use.push, group.fn)
        if lifted is not use.push:
            branches.setdefault(lifted, []).append(use)
            cache_remark(use.push, "is an optional record field: written by one branch, "
                                   "its slot reserved in every record")  # fmt: skip
    # A branch's values become results of a new `scf.if`, which replaces the old one and
    # its results: the other pushed values are read after that (a push of the old one's
    # result now pushes the new one's).
    optional: dict[int, SSAValue] = {}
    for if_op, uses in branches.items():
        assert isinstance(if_op, scf.IfOp)
        optional.update(zip(map(id, uses), _yield_out(if_op, [u.push for u in uses])))
    values = [optional.get(id(u), u.push.value) for u in fields]

    # Allocation, with the trip counts reused by the writes and reads.
    anchor = _anchor(group)
    ib = IndexBuilder(InsertPoint.before(anchor))
    q = group.split
    rect = group.fwd_loops if q is None else group.fwd_loops[: q + 1]
    sizes = [trip_counts.get(loop) or ib.trip_count(loop) for loop in rect]
    trip_counts.update(zip(rect, sizes))
    count: SSAValue | int = 1
    table = None
    if group.while_op is not None:
        count = FIRST_CAPACITY
        if sizes:
            count = sizes[0]
            for size in sizes[1:]:
                count = ib.mul(count, size)
            table = offsets_cell(count, anchor)
            static = const_int(count)
            # A first capacity, so at least 1 record: the nest around may not run at all.
            count = count if static is None else max(static, 1)
    elif q is not None:
        table, total = offsets_table(group.fwd_loops, q, sizes)
        known = iterations(group.fwd_loops)
        # A static count is at least 1: a nest with no iteration at all keeps its count
        # computed (0 at run time, as a rectangular nest with a zero trip count has).
        count = total if not known else known
    elif sizes:
        total = sizes[0]
        for size in sizes[1:]:
            total = ib.mul(total, size)
        count = total
    alloc = region.AllocOp(tape_type, count)
    if group.in_dram:
        alloc.attributes[DRAM_ATTR] = builtin.UnitAttr()
    if group.while_op is not None:
        alloc.attributes[GROWABLE_ATTR] = builtin.UnitAttr()
        where = "a growable DRAM record tape" if group.in_dram else "a growable record tape"
        for use in group.caches:
            cache_remark(use.push, f"in {where} (one record per iteration of an "
                                   "'scf.while': the record count is known only as it "
                                   "runs)")  # fmt: skip
    elif q is not None:
        alloc.attributes[RAGGED_ATTR] = builtin.UnitAttr()
        for use in group.caches:
            records = f"{count} records" if isinstance(count, int) else "records"
            cache_remark(use.push, f"in a ragged region ({records} indexed by running "
                                   "offsets: the inner trip count varies with the outer "
                                   "iteration)")  # fmt: skip
    Rewriter.insert_op(alloc, InsertPoint.before(anchor))
    tape_value = alloc.tape

    # One write after the last push (a while region's tape first grows to hold it).
    ib = IndexBuilder(InsertPoint.after(_last(group, [u.push for u in group.caches])))
    if group.while_op is not None:
        o = _nest_index(group.fwd_loops, sizes, False, cache) if sizes else None
        index = forward_index(group.while_op, table, o)
        Rewriter.insert_op(region.ReserveOp(tape_value, ib.add(index, ib.const(1))), ib.point)
    else:
        index = _record_index(group.fwd_loops, q, sizes, table, False, cache, ib)
    Rewriter.insert_op(region.WriteOp(tape_value, index, values), ib.point)
    ib.prune()

    # One read before the first pop.
    ib = IndexBuilder(InsertPoint.before(_last(group, [u.pop for u in group.caches], True)))
    if group.while_op is not None and not sizes:
        index = reverse_index(group.rev_loops[-1], ib)
    else:
        index = _record_index(group.rev_loops, q, sizes, table, True, cache, ib)
    read = region.ReadOp(tape_value, index)
    Rewriter.insert_op(read, ib.point)
    ib.prune()
    for use, value in zip(fields, read.values):
        use.pop.value.replace_all_uses_with(value)

    # Dealloc where the caches were freed (the latest free of the group).
    frees = [f for u in group.caches for f in u.frees]
    dealloc_point = None
    if frees:
        by_block = [f for f in frees if f.parent_block() is frees[0].parent_block()]
        last = max(by_block, key=lambda f: f.parent_block().get_operation_index(f))  # type: ignore[union-attr]
        dealloc_point = InsertPoint.after(last)
    if dealloc_point is not None:
        Rewriter.insert_op(region.DeallocOp(tape_value), dealloc_point)
        if table is not None:
            Rewriter.insert_op(memref.DeallocOp.get(table), dealloc_point)

    for use in group.caches:
        Rewriter.erase_op(use.push)
        Rewriter.erase_op(use.pop)
        for free in use.frees:
            Rewriter.erase_op(free)
        Rewriter.erase_op(use.init)
    return alloc


@dataclass(frozen=True)
class RegionsPass(ModulePass):
    """Packs the values each region instance pushes into one record of a region tape."""

    name = "tapeflow-regions"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        form_regions(op)


Select = Callable[[func.FuncOp, list[RegionGroup]], list[RegionGroup]]


def form_regions(op: builtin.ModuleOp, select: Select | None = None) -> None:
    """Rewrites the regions of every function (those `select` keeps, when given: the cost
    model's choice); remarks say why each cache left alone stays a cache."""
    check_steps(op)
    for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
        regions, skipped = find_regions(fn)
        for init, reason in skipped.items():
            _skipped_remark(init, reason)
        _shared_remarks(fn)
        if select is not None:
            regions = select(fn, regions)
        trip_counts: dict[scf.ForOp, SSAValue] = {}
        index_cache: dict = {}
        for group in regions:
            _rewrite(group, trip_counts, index_cache)
    prune_constants(op)


def _shared_remarks(fn: func.FuncOp) -> None:
    """The caches of a recursive function (`autodiff/calls.py`) are arguments shared by
    all its calls: how many values each call pushes is known only as the recursion runs,
    so they stay Enzyme's growable stacks."""
    if not fn.body.blocks:
        return
    for arg in fn.body.block.args:
        if isinstance(arg.type, tape.CacheType):
            pushes = [u.operation for u in arg.uses if isinstance(u.operation, tape.PushOp)]
            for push in pushes[:1]:
                cache_remark(push, "kept in Enzyme's layout: a cache of a recursive function, "
                             "shared by its calls (a stack that grows as the recursion runs)")


def _skipped_remark(init: tape.InitOp, reason: str) -> None:
    pushes = [u.operation for u in init.cache.uses if isinstance(u.operation, tape.PushOp)]
    text = f"kept in Enzyme's layout: {reason}"
    if pushes:
        cache_remark(pushes[0], text)
    else:
        remark(init, f"cache kept in Enzyme's layout: {reason}")


def _yield_out(old: scf.IfOp, pushes: list[tape.PushOp]) -> list[SSAValue]:
    """The values `pushes` cache inside the branches of `old`, as new results of the
    `scf.if` that replaces it (a branch without a push yields a zero of the value's type:
    the record's slot, never read there)."""
    if not old.false_region.blocks:
        old.false_region.add_block(Block([scf.YieldOp()]))
    for block in (old.true_region.block, old.false_region.block):
        yield_op = block.last_op
        assert isinstance(yield_op, scf.YieldOp)
        fields: list[SSAValue] = []
        for push in pushes:
            if push.parent_block() is block:
                fields.append(push.value)
                continue
            zero = _zero(push.value.type)
            Rewriter.insert_op(zero, InsertPoint.before(yield_op))
            fields.append(zero.result)
        Rewriter.replace_op(yield_op, scf.YieldOp(*yield_op.operands, *fields))
    then, other = old.true_region, old.false_region
    new = scf.IfOp(
        old.cond,
        [*old.result_types, *(p.value.type for p in pushes)],
        old.detach_region(then),
        old.detach_region(other),
    )
    new.attributes.update(old.attributes)
    Rewriter.insert_op(new, InsertPoint.before(old))
    for a, b in zip(old.results, new.results):
        a.replace_all_uses_with(b)
    Rewriter.erase_op(old)
    return list(new.results[len(new.results) - len(pushes) :])


def _zero(typ: Attribute) -> arith.ConstantOp:
    if isinstance(typ, builtin.AnyFloat):
        return arith.ConstantOp(builtin.FloatAttr(0.0, typ))
    return arith.ConstantOp(builtin.IntegerAttr(0, typ))  # type: ignore[arg-type]
