"""`tapeflow-lower-tape`: the Enzyme baseline layout of the gradient tape.

Every `!tape.cache<T>` becomes its own DRAM buffer (struct of arrays: one array per cached
value, never packed into records), and the `tape.*` ops become plain `memref` loads and
stores. This is the layout TapeFlow is compared against, so it is as frugal as Enzyme's:
one element per push, sized by the trip counts, no padding, no metadata traffic in loops
whose trip counts are known.

Layout rule, per cache (chosen in this order):

1. **Indexed** (LLVM Enzyme's layout, the common case). The cache has one `tape.push`,
   nested in `scf.for` loops `L1..Ld` (outermost first, nothing else around it: no
   `scf.if`, no `scf.while`) whose trip counts `n1..nd` are compile-time constants; every
   `tape.pop` sits in reversed loops `R1..Rd` carrying the same `tapeflow.loop` ids as
   `L1..Ld`, each running a counter `k` from 0 to `n` step 1 (the contract of
   `tapeflow-autodiff`). The cache becomes `memref<n1 x ... x nd x T>` (rank 0 for a push
   outside any loop). The push stores at the normalized indices `((iv - lb) / step)` of
   `L1..Ld`; the pop loads at `(n - 1 - k)` of `R1..Rd`, i.e. the element its forward
   iteration wrote. Row-major, so the forward sweep writes increasing addresses and the
   reverse sweep reads them back in decreasing order, exactly as Enzyme's cache arrays
   indexed by the loop induction variables. No counter is kept in memory.

2. **Stack, static capacity** (conditional pushes: `scf.if` inside constant-trip-count
   loops, several push sites, pops not in the mirrored loop nest, or loop bounds that
   depend on outer induction variables with known ranges, as in a triangular nest). The
   capacity is the exact number of pushes when the bounds and branch conditions around
   each push site depend only on constants and outer induction variables (the iteration
   space is enumerated at compile time: a triangular nest, a `j != i` mask); otherwise
   the worst case (product of the largest trip counts around each push site, each
   `scf.if` branch counted as taken), known at compile time. The cache becomes
   `memref<CAP x T>` plus a stack pointer `memref<index>`; a push stores at `sp` and
   increments it, a pop decrements it and loads. Addresses still increase in the forward
   sweep and decrease in the reverse sweep; conditional pushes are packed (no holes).

3. **Sized at run time** (trip counts unknown at compile time but known at the
   nest's entry: bounds that are function arguments, values computed before the nest, or
   integer arithmetic on those recomputed inside it, as C's `i < n - 1` is in every
   iteration of a time loop). The buffer is allocated once, right before the outermost
   loop around the first push, its size computed there from the bounds (the arithmetic
   copied there, once per nest): what Enzyme does for a loop whose trip count is known on
   entry (its CacheUtility sizes the allocation from the loop limits, after LICM). With
   rule 1's shape (one push in `scf.for`s, pops in the mirrored loops) it is rule 1's
   array with dynamic sizes, `memref<?x...x?xT>`, indexed by the induction variables
   (the pop at `(n - 1) - k`, `n - 1` computed at the nest's entry): no counter in
   memory, as Enzyme indexes such a cache. Otherwise it is rule 2's stack in a
   `memref<?xT>`.

4. **Stack, growable** (an iteration count known only as the loop runs: `scf.while`, a
   bound loaded from memory inside the nest); only then does a cache grow. As Enzyme's
   `EnzymeToMemRef`:
   `{elements, size, capacity}` = a `memref<memref<?xT>>` slot holding the current buffer,
   a `memref<index>` size and a `memref<index>` capacity. The initial capacity is
   `tape.init`'s `capacity` hint (else 16); a push on a full buffer doubles it (allocate,
   copy, free the old one).

Every tape buffer's `memref.alloc` carries the unit attribute `tapeflow.tape`; the
bookkeeping buffers of the stack layouts (stack pointer, size, capacity, slot) carry
`tapeflow.tape_meta`, so a cost model can attribute traffic to the tape.

With option `ideal_tape=true` the loads and stores of the cached values themselves (not
the stack's bookkeeping, nor a growable buffer's copy when it doubles) carry the unit
attribute `tapeflow.ideal_tape`, as gem5-SALAM's modified Enzyme tags its tape accesses
with metadata: the hardware model counts them and charges no memory access for them (a
free tape, the "ad" runs of gem5-SALAM; the `ideal-tape` design of tapeflow-bench). The
program is otherwise the one without the option.

Element types are kept: `f64` as f64, `index` as index, `i1` as a `memref<...xi1>`
(one byte per element once lowered to LLVM). `tape.free` becomes `memref.dealloc` of the
buffers. In the indexed layout a pop cannot miss its push by construction; in the stack
layouts a pop on an empty stack loads at index -1, which the interpreter reports as an
out-of-bounds load located at the `tape.pop`; option `assert-pops=true` adds Enzyme's
`cf.assert "pop on empty cache"` for native runs. After the pass no `tape` op is left.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tapeflow.diagnostics import op_error
from tapeflow.dialects import tape
from tapeflow.transforms.analysis.constants import fold_int, trip_count
from tapeflow.transforms.builder import At, alloc_growable, pop_index, push_growable
from tapeflow.transforms.index_utils import loop_id
from tapeflow.transforms.lower_split_tape import lower_split_tapes

DEFAULT_GROWABLE_CAPACITY = 16
"""Initial capacity of a growable cache whose `tape.init` has no `capacity` hint."""

TAPE_ATTR = "tapeflow.tape"
"""Unit attribute on the `memref.alloc` of every tape buffer (the cached values)."""

TAPE_META_ATTR = "tapeflow.tape_meta"
"""Unit attribute on the allocs of a stack's bookkeeping (stack pointer, size, capacity,
buffer slot), so that a cost model can tell tape data from tape metadata."""

IDEAL_TAPE_ATTR = "tapeflow.ideal_tape"
"""Unit attribute on the loads and stores of the cached values with `ideal_tape=true`."""


def _enclosing(op: Operation, scope: Operation | None) -> list[Operation] | None:
    """The ops around `op` up to `scope` (the op holding the cache's `tape.init`: its
    `func.func` per the contract, or a loop for a per-iteration cache), outermost first.
    None if `op` is not inside `scope`."""
    chain: list[Operation] = []
    parent = op.parent_op()
    while parent is not None and parent is not scope:
        if isinstance(parent, func.FuncOp):
            return None
        chain.append(parent)
        parent = parent.parent_op()
    if parent is None:
        return None
    return chain[::-1]


def _at(point: InsertPoint) -> At:
    """A builder whose allocs carry `tapeflow.tape` unless the call names another role."""
    return At(point, alloc_role=TAPE_ATTR)


# --------------------------------------------------------------------------------------
# Analysis: which layout each cache gets


@dataclass
class _Indexed:
    trip_counts: list[int]
    push_loops: list[scf.ForOp]


@dataclass
class _StaticStack:
    capacity: int


@dataclass
class _RuntimeStack:
    anchor: Operation
    """The top-level op (in the function's entry block) before which the capacity is
    computed: the outermost loop around the first push site."""
    sites: list[list[Operation]]
    """For each push, the ops around it (outermost first)."""


@dataclass
class _RuntimeIndexed:
    stack: _RuntimeStack
    push_loops: list[scf.ForOp]


@dataclass
class _GrowableStack:
    initial: int


def _mirrored_loops(init: tape.InitOp, pushes: list[tape.PushOp],
                    pops: list[tape.PopOp]) -> list[scf.ForOp] | None:
    """The `scf.for`s around the one push when each pop sits in their mirror (loops with
    the same `tapeflow.loop` ids, each a counter from 0 step 1): rule 1's shape."""
    if len(pushes) != 1:
        return None
    scope = init.parent_op()
    around = _enclosing(pushes[0], scope)
    if around is None or not all(isinstance(o, scf.ForOp) for o in around):
        return None
    loops: list[scf.ForOp] = around  # type: ignore[assignment]
    ids = [loop_id(loop) for loop in loops]
    if any(i is None for i in ids):
        return None
    for pop in pops:
        rev = _enclosing(pop, scope)
        if rev is None or len(rev) != len(loops):
            return None
        for r, want in zip(rev, ids, strict=True):
            if not isinstance(r, scf.ForOp) or loop_id(r) != want:
                return None
            if (fold_int(r.lb), fold_int(r.step)) != (0, 1):
                return None
    return loops


def _indexed_layout(init: tape.InitOp, loops: list[scf.ForOp],
                    pops: list[tape.PopOp]) -> _Indexed | None:
    """Rule 1: the mirrored `loops`' trip counts are constants, as the pops' loops'."""
    counts = [trip_count(loop, fold=True) for loop in loops]
    if any(c is None for c in counts):
        return None
    for pop in pops:
        rev: list[scf.ForOp] = _enclosing(pop, init.parent_op())  # type: ignore[assignment]
        if any(fold_int(r.ub) != n for r, n in zip(rev, counts, strict=True)):
            return None
    return _Indexed([c for c in counts if c is not None], loops)


def value_range(value: SSAValue, ivs: dict[SSAValue, tuple[int, int]],
                depth: int = 0) -> tuple[int, int] | None:
    """An interval holding every value `value` takes, given the ranges `ivs` of the
    enclosing loops' induction variables; None when unknown."""
    if value in ivs:
        return ivs[value]
    c = fold_int(value)
    if c is not None:
        return (c, c)
    op = value.owner
    if not isinstance(op, Operation) or depth > 32:
        return None
    if isinstance(op, arith.IndexCastOp):
        return value_range(op.input, ivs, depth + 1)
    if isinstance(op, arith.SelectOp):
        a = value_range(op.lhs, ivs, depth + 1)
        b = value_range(op.rhs, ivs, depth + 1)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if op.name in ("arith.addi", "arith.subi", "arith.muli", "arith.maxsi", "arith.minsi"):
        a = value_range(op.operands[0], ivs, depth + 1)
        b = value_range(op.operands[1], ivs, depth + 1)
        if a is None or b is None:
            return None
        if op.name == "arith.addi":
            return (a[0] + b[0], a[1] + b[1])
        if op.name == "arith.subi":
            return (a[0] - b[1], a[1] - b[0])
        if op.name == "arith.maxsi":
            return (max(a[0], b[0]), max(a[1], b[1]))
        if op.name == "arith.minsi":
            return (min(a[0], b[0]), min(a[1], b[1]))
        products = [x * y for x in a for y in b]
        return (min(products), max(products))
    return None


def _max_trip_count(loop: scf.ForOp, ivs: dict[SSAValue, tuple[int, int]]) -> int | None:
    """The largest trip count `loop` can have (its bounds may depend on outer ivs)."""
    step = fold_int(loop.step)
    lb = value_range(loop.lb, ivs)
    ub = value_range(loop.ub, ivs)
    if step is None or step <= 0 or lb is None or ub is None:
        return None
    return max(0, -(-(ub[1] - lb[0]) // step))


EXACT_COUNT_LIMIT = 1 << 22
"""Most iteration points `exact_push_count` enumerates at compile time."""

_INT_EVAL = {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
}
_CMPI_EVAL = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)


def _evaluate(value: SSAValue, env: dict[SSAValue, np.ndarray], n: int,
              depth: int = 0) -> np.ndarray | None:
    """`value` at each of the `n` iteration points whose induction variables `env` holds
    (int64 arrays); None when it depends on anything else (memory, a float)."""
    if value in env:
        return env[value]
    c = fold_int(value)
    if c is not None:
        return np.full(n, c, dtype=np.int64)
    op = value.owner
    if not isinstance(op, Operation) or depth > 32:
        return None
    args = [_evaluate(v, env, n, depth + 1) for v in op.operands]
    if any(a is None for a in args):
        return None
    if op.name in _INT_EVAL:
        return _INT_EVAL[op.name](args[0], args[1])
    if isinstance(op, arith.IndexCastOp):
        return args[0]
    if isinstance(op, arith.SelectOp):
        return np.where(args[0] != 0, args[1], args[2])
    if isinstance(op, arith.CmpiOp) and op.predicate.value.data < len(_CMPI_EVAL):
        return _CMPI_EVAL[op.predicate.value.data](args[0], args[1]).astype(np.int64)
    if op.name in ("arith.divsi", "arith.remsi") and np.all(args[1] != 0):
        a, b = args[0], args[1]
        q = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))  # towards zero, as C
        return q if op.name == "arith.divsi" else args[0] - q * args[1]
    return None


def exact_push_count(push: Operation, around: list[Operation]) -> int | None:
    """How many times `push` runs, when every loop bound and `scf.if` condition around it
    depends only on constants and outer induction variables: the iteration space is
    enumerated at compile time (vectorized, at most `EXACT_COUNT_LIMIT` points). Exact for
    triangular nests and masks such as `j != i`; None otherwise."""
    env: dict[SSAValue, np.ndarray] = {}
    n = 1
    for k, o in enumerate(around):
        if isinstance(o, scf.ForOp):
            lb, ub, step = (_evaluate(v, env, n) for v in (o.lb, o.ub, o.step))
            if lb is None or ub is None or step is None or np.any(step <= 0):
                return None
            trips = np.maximum(0, -((lb - ub) // step))
            total = int(trips.sum())
            if total > EXACT_COUNT_LIMIT:
                return None
            point = np.repeat(np.arange(n), trips)
            first = np.repeat(np.cumsum(trips) - trips, trips)
            env = {v: a[point] for v, a in env.items()}
            env[o.body.block.args[0]] = lb[point] + (np.arange(total) - first) * step[point]
            n = total
        elif isinstance(o, scf.IfOp):
            cond = _evaluate(o.cond, env, n)
            if cond is None:
                return None
            inner = around[k + 1] if k + 1 < len(around) else push
            taken = cond != 0 if inner.parent_region() is o.true_region else cond == 0
            env = {v: a[taken] for v, a in env.items()}
            n = int(taken.sum())
        else:
            return None
    return n


def _static_capacity(init: tape.InitOp, pushes: list[tape.PushOp]) -> int | None:
    """The number of pushes, when it is known at compile time: exact when the iteration
    space can be enumerated (`exact_push_count`); otherwise the worst case, each loop
    counted with its largest trip count (an upper bound from the ranges of the outer
    induction variables), each `scf.if` as taken."""
    total = 0
    for push in pushes:
        around = _enclosing(push, init.parent_op())
        if around is None:
            return None
        exact = exact_push_count(push, around)
        if exact is not None:
            total += exact
            continue
        count = 1
        ivs: dict[SSAValue, tuple[int, int]] = {}
        for o in around:
            if isinstance(o, scf.ForOp):
                n = _max_trip_count(o, ivs)
                if n is None:
                    return None
                count *= n
                lb = value_range(o.lb, ivs)
                ub = value_range(o.ub, ivs)
                assert lb is not None and ub is not None
                ivs[o.body.block.args[0]] = (lb[0], max(lb[0], ub[1] - 1))
            elif not isinstance(o, scf.IfOp):
                return None  # scf.while, execute_region...: unknown count
        total += count
    return total


def _defined_before(value: SSAValue, anchor: Operation) -> bool:
    """Whether `value` is available right before `anchor` (defined earlier in its block or
    in an enclosing block, before the op that contains `anchor`)."""
    current: Operation | None = anchor
    while current is not None:
        block = current.parent_block()
        if block is None:
            return False
        if value.owner is block:
            return True
        owner = value.owner
        if isinstance(owner, Operation) and owner.parent_block() is block:
            return block.get_operation_index(owner) < block.get_operation_index(current)
        current = block.parent_op()
    return False


_REMATERIALIZABLE = (
    arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.IndexCastOp,
    arith.MaxSIOp, arith.MinSIOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp,
)  # fmt: skip
"""Integer ops that cannot trap: a loop bound they compute from values available before
a nest is known at the nest's entry, and is recomputed there (what LLVM's LICM and
scalar evolution give Enzyme's CacheUtility)."""


def _known_at(value: SSAValue, anchor: Operation, depth: int = 0) -> bool:
    """Whether `value` is available before `anchor`, or computable there by
    `_REMATERIALIZABLE` ops from values that are (a run-time trip count known at entry)."""
    if _defined_before(value, anchor):
        return True
    owner = value.owner
    if depth > 16 or not isinstance(owner, _REMATERIALIZABLE):
        return False
    return all(_known_at(v, anchor, depth + 1) for v in owner.operands)


def _available(at: At, value: SSAValue, anchor: Operation, copies: dict) -> SSAValue:
    """`value` at `at` (before `anchor`): itself, or a copy of the ops computing it."""
    if _defined_before(value, anchor):
        return value
    if value not in copies:
        owner = value.owner
        assert isinstance(owner, Operation)
        operands = [_available(at, v, anchor, copies) for v in owner.operands]
        clone = owner.clone()
        for i, v in enumerate(operands):
            clone.operands[i] = v
        at.op(clone)
        for old, new in zip(owner.results, clone.results):
            copies[old] = new
    return copies[value]


def _runtime_capacity(init: tape.InitOp, pushes: list[tape.PushOp]) -> _RuntimeStack | None:
    """Trip counts unknown at compile time but fixed before the loops start (bounds are
    arguments or values computed before the nest): the capacity is computed at run time."""
    sites: list[list[Operation]] = []
    anchor: Operation | None = None
    for push in pushes:
        around = _enclosing(push, init.parent_op())
        if not around:
            return None
        if not all(isinstance(o, scf.ForOp | scf.IfOp) for o in around):
            return None
        sites.append(around)
        top = around[0]
        if anchor is None or (
            top.parent_block() is anchor.parent_block()
            and top.parent_block().get_operation_index(top)
            < anchor.parent_block().get_operation_index(anchor)
        ):
            anchor = top
    if anchor is None or anchor.parent_block() is not init.parent_block():
        return None
    block = init.parent_block()
    assert block is not None
    if block.get_operation_index(anchor) < block.get_operation_index(init):
        return None
    for around in sites:
        if around[0].parent_block() is not anchor.parent_block():
            return None
        for o in around:
            if isinstance(o, scf.ForOp):
                if not all(_known_at(v, anchor) for v in (o.lb, o.ub, o.step)):
                    return None
    return _RuntimeStack(anchor, sites)


def choose_layout(
    init: tape.InitOp,
) -> _Indexed | _StaticStack | _RuntimeIndexed | _RuntimeStack | _GrowableStack:
    """The layout `init`'s cache gets (see the module docstring)."""
    users = [use.operation for use in init.cache.uses]
    pushes = [u for u in users if isinstance(u, tape.PushOp)]
    pops = [u for u in users if isinstance(u, tape.PopOp)]
    loops = _mirrored_loops(init, pushes, pops)
    indexed = None if loops is None else _indexed_layout(init, loops, pops)
    if indexed is not None:
        return indexed
    capacity = _static_capacity(init, pushes)
    if capacity is not None:
        return _StaticStack(capacity)
    runtime = _runtime_capacity(init, pushes)
    if runtime is not None:
        return runtime if loops is None else _RuntimeIndexed(runtime, loops)
    hint = init.capacity.value.data if init.capacity is not None else DEFAULT_GROWABLE_CAPACITY
    return _GrowableStack(max(1, hint))


def indexed_at_entry(init: tape.InitOp) -> bool:
    """Whether `init`'s cache gets rule 3's indexed array (sized at the nest's entry)."""
    return isinstance(choose_layout(init), _RuntimeIndexed)


# --------------------------------------------------------------------------------------
# Rewriting


class _LoopIndices:
    """Per-loop index values, built once at the top of the loop body and shared by every
    push or pop in it (so an inner loop does not recompute an outer loop's index)."""

    def __init__(self) -> None:
        self._values: dict[tuple[int, str], SSAValue] = {}

    def normalized(self, loop: scf.ForOp) -> SSAValue:
        """`(iv - lb) / step` of a forward loop (the iv itself when lb = 0, step = 1)."""
        iv = loop.body.block.args[0]
        lb, step = fold_int(loop.lb), fold_int(loop.step)
        if lb == 0 and step == 1:
            return iv
        key = (id(loop), "fwd")
        if key not in self._values:
            at = _at(InsertPoint.at_start(loop.body.block))
            shifted = iv if lb == 0 else at.val(arith.SubiOp(iv, loop.lb))
            self._values[key] = (
                shifted if step == 1 else at.val(arith.DivUIOp(shifted, loop.step))
            )
        return self._values[key]

    def reversed(self, loop: scf.ForOp, n: int | SSAValue) -> SSAValue:
        """`n - 1 - k` of a reverse loop whose counter `k` runs from 0 to `n`: `n` a
        constant, or the value `n - 1` computed before the nest."""
        key = (id(loop), "rev" if isinstance(n, int) else id(n))
        if key not in self._values:
            at = _at(InsertPoint.at_start(loop.body.block))
            last = at.index(n - 1) if isinstance(n, int) else n
            self._values[key] = at.val(arith.SubiOp(last, loop.body.block.args[0]))
        return self._values[key]


def _lower_indexed(init: tape.InitOp, layout: _Indexed | _RuntimeIndexed,
                   users: list[Operation], loop_indices: _LoopIndices,
                   entry: _EntryCounts, role: str | None) -> None:  # fmt: skip
    element = init.cache.type.element_type
    if isinstance(layout, _Indexed):
        buffer = _at(InsertPoint.before(init)).alloc(element, layout.trip_counts)
        lasts: list[int | SSAValue] = [n for n in layout.trip_counts]
    else:
        anchor = layout.stack.anchor
        counts = [entry.of(loop, anchor) for loop in layout.push_loops]
        shape = [DYNAMIC_INDEX] * len(counts)
        buffer = _at(InsertPoint.before(anchor)).alloc(element, shape, [n for n, _ in counts])
        lasts = [last for _, last in counts]
    for user in users:
        at = _at(InsertPoint.before(user))
        if isinstance(user, tape.PushOp):
            indices = [loop_indices.normalized(loop) for loop in layout.push_loops]
            at.store(user.value, buffer, indices, role)
            Rewriter.erase_op(user)
        elif isinstance(user, tape.PopOp):
            rev = _enclosing(user, init.parent_op())
            assert rev is not None
            indices = []
            for r, n in zip(rev, lasts, strict=True):
                assert isinstance(r, scf.ForOp)
                indices.append(loop_indices.reversed(r, n))
            value = at.load(buffer, indices, role)
            user.value.replace_all_uses_with(value)
            Rewriter.erase_op(user)
        else:
            at.op(memref.DeallocOp.get(buffer))
            Rewriter.erase_op(user)


def _trips(at: At, loop: scf.ForOp, anchor: Operation, copies: dict) -> SSAValue:
    """Emits `loop`'s trip count max(0, ceil((ub - lb) / step)) before `anchor`."""
    zero, one = at.index(0), at.index(1)
    lb, ub, step = (_available(at, v, anchor, copies) for v in (loop.lb, loop.ub, loop.step))
    span = at.val(arith.SubiOp(ub, lb))
    step_m1 = at.val(arith.SubiOp(step, one))
    trips = at.val(arith.DivSIOp(at.val(arith.AddiOp(span, step_m1)), step))
    positive = at.val(arith.CmpiOp(trips, zero, "sgt"))
    return at.val(arith.SelectOp(positive, trips, zero))


def _runtime_count(at: At, layout: _RuntimeStack) -> SSAValue:
    """Emits the number of pushes in the worst case: sum over push sites of the product of
    the trip counts of the loops around them."""
    total = at.index(0)
    copies: dict[SSAValue, SSAValue] = {}
    for around in layout.sites:
        count = at.index(1)
        for o in around:
            if isinstance(o, scf.ForOp):
                count = at.val(arith.MuliOp(count, _trips(at, o, layout.anchor, copies)))
        total = at.val(arith.AddiOp(total, count))
    return total


class _EntryCounts:
    """Each loop's trip count and that minus one, emitted once before its nest's anchor
    and shared by every cache of the nest (as the twin with constant sizes shares its
    constants)."""

    def __init__(self) -> None:
        self._copies: dict[int, dict[SSAValue, SSAValue]] = {}
        self._counts: dict[tuple[int, int], tuple[SSAValue, SSAValue]] = {}

    def of(self, loop: scf.ForOp, anchor: Operation) -> tuple[SSAValue, SSAValue]:
        key = (id(anchor), id(loop))
        if key not in self._counts:
            at = _at(InsertPoint.before(anchor))
            n = _trips(at, loop, anchor, self._copies.setdefault(id(anchor), {}))
            self._counts[key] = (n, at.val(arith.SubiOp(n, at.index(1))))
        return self._counts[key]


def _lower_stack(init: tape.InitOp, layout: _StaticStack | _RuntimeStack,
                 users: list[Operation], assert_pops: bool, role: str | None) -> None:
    element = init.cache.type.element_type
    if isinstance(layout, _StaticStack):
        at0 = _at(InsertPoint.before(init))
        buffer = at0.alloc(element, [layout.capacity])
    else:
        at0 = _at(InsertPoint.before(layout.anchor))
        buffer = at0.alloc(element, [DYNAMIC_INDEX], [_runtime_count(at0, layout)])
    sp = at0.alloc(IndexType(), [], role=TAPE_META_ATTR)
    at0.store(at0.index(0), sp)
    for user in users:
        at = _at(InsertPoint.before(user))
        if isinstance(user, tape.PushOp):
            n = at.load(sp)
            at.store(user.value, buffer, [n], role)
            at.store(at.val(arith.AddiOp(n, at.index(1))), sp)
        elif isinstance(user, tape.PopOp):
            top = pop_index(at, sp, user, assert_pops)
            user.value.replace_all_uses_with(_located(at.load(buffer, [top], role), user))
        else:
            at.op(memref.DeallocOp.get(buffer))
            at.op(memref.DeallocOp.get(sp))
        Rewriter.erase_op(user)


def _located(value: SSAValue, like: Operation) -> SSAValue:
    """Gives the op defining `value` the source location of `like` (the tape op it
    replaces), so a run-time error (out-of-bounds pop on an empty stack) points there."""
    if isinstance(value.owner, Operation):
        value.owner.location = like.location
    return value


def _lower_growable(init: tape.InitOp, layout: _GrowableStack, users: list[Operation],
                    assert_pops: bool, role: str | None) -> None:
    element = init.cache.type.element_type
    at0 = _at(InsertPoint.before(init))
    slot, size, capacity = alloc_growable(at0, element, layout.initial, TAPE_META_ATTR)
    for user in users:
        at = _at(InsertPoint.before(user))
        if isinstance(user, tape.PushOp):
            push_growable(at, user.value, slot, size, capacity, element, role)
        elif isinstance(user, tape.PopOp):
            top = pop_index(at, size, user, assert_pops)
            value = at.load(at.load(slot), [top], role)
            user.value.replace_all_uses_with(_located(value, user))
        else:
            at.op(memref.DeallocOp.get(at.load(slot)))
            for ref in (slot, size, capacity):
                at.op(memref.DeallocOp.get(ref))
        Rewriter.erase_op(user)


def lower_tape(module: builtin.ModuleOp, assert_pops: bool = False,
               ideal_tape: bool = False) -> None:
    """Lowers every `tape` op of `module` to the Enzyme layout (module docstring)."""
    from tapeflow.transforms.shared_tape import lower_shared_caches

    role = IDEAL_TAPE_ATTR if ideal_tape else None
    lower_split_tapes(module, (TAPE_ATTR, TAPE_META_ATTR), assert_pops, role)
    lower_shared_caches(module, DEFAULT_GROWABLE_CAPACITY, assert_pops, role, TAPE_ATTR,
                        TAPE_META_ATTR)  # those of recursive functions: rule 4, by reference
    inits = [op for op in module.walk() if isinstance(op, tape.InitOp)]
    for init in inits:
        users = [use.operation for use in init.cache.uses]
        for user in users:
            bad_push = isinstance(user, tape.PushOp) and user.value is init.cache
            if not isinstance(user, tape.PushOp | tape.PopOp | tape.FreeOp) or bad_push:
                raise PassFailedException(
                    op_error(user, "uses a tape.cache in a way tapeflow-lower-tape cannot "
                             "lower (only tape.push/pop/free of a tape.init result, or "
                             "one passed to a call)")
                )
    loop_indices, entry = _LoopIndices(), _EntryCounts()
    for init in inits:
        users = [use.operation for use in init.cache.uses]
        layout = choose_layout(init)
        if isinstance(layout, _Indexed | _RuntimeIndexed):
            _lower_indexed(init, layout, users, loop_indices, entry, role)
        elif isinstance(layout, _StaticStack | _RuntimeStack):
            _lower_stack(init, layout, users, assert_pops, role)
        else:
            _lower_growable(init, layout, users, assert_pops, role)
        Rewriter.erase_op(init)
    for op in module.walk():
        if op.dialect_name() == "tape":
            raise PassFailedException(
                op_error(op, "has a tape.cache operand not produced by tape.init")
            )


@dataclass(frozen=True)
class LowerTapePass(ModulePass):
    """Lowers tape caches to Enzyme's layout: one DRAM array per cached value."""

    name = "tapeflow-lower-tape"

    assert_pops: bool = False
    """Guard every stack pop with `cf.assert "pop on empty cache"` (as EnzymeToMemRef
    does). Off by default: the baseline's op stream stays that of Enzyme at -O2, and the
    interpreter already reports a pop on an empty stack as an out-of-bounds load located
    at the `tape.pop`."""

    ideal_tape: bool = False
    """Tag the cached values' loads and stores `tapeflow.ideal_tape` (module docstring):
    the hardware model counts them but charges no memory access."""

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        lower_tape(op, self.assert_pops, self.ideal_tape)
