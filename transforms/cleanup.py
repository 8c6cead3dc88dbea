"""xDSL's canonicalize, cse and licm with each op class's traits looked up once.

`tapeflow-cleanup` spends most of its time asking xDSL the same questions about op
classes: `get_trait` and `get_traits_of_type` scan the class's traits on every call, and
`get_effects` of a loop collects the effects of its whole body again each time an op
(the loop, or each op around it) is asked about. The drivers here make the same rewrites
in the same order as xDSL's `CanonicalizePass`, `CommonSubexpressionElimination` and
`LoopInvariantCodeMotionPass` (test_cleanup_drivers compares the printed IR):

- `class_facts`: what canonicalize, the dead-code pass, cse and licm read from an op's
  class (its canonicalization patterns, whether it folds, is a terminator or a symbol,
  its memory-effect traits), found once per class;
- `Effects`: xDSL's `get_effects` from those facts, memoized per op while no op's
  effects change (the dead-code pass's liveness, one cse, one licm);
- `canonicalize`: xDSL's greedy walker with one pattern that does what
  `GreedyRewritePatternApplier([CanonicalizationRewritePattern()], folding_enabled=True)`
  does, and between its walks a dead-code pass that finds the same live ops in one walk
  (`region_dce`);
- `cse`: xDSL's `CSEDriver` whose per-op decision reads `Effects`, each op's key hashed
  once; `licm`: xDSL's walk with a pattern that reads `Effects`.

Ops whose class is unregistered, and effect traits of other kinds than xDSL's constant
ones and `RecursiveMemoryEffect`, go through xDSL's own functions.
"""
from __future__ import annotations

import functools
from collections import deque
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.folder import Folder
from xdsl.ir import Operation, Region, SSAValue
from xdsl.ir.post_order import PostOrderIterator
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import (
    ConstantLike,
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    HasFolder,
    IsTerminator,
    MemoryAllocEffect,
    MemoryEffect,
    MemoryEffectKind,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoMemoryEffect,
    RecursiveMemoryEffect,
    SymbolOpInterface,
    get_effects,
    is_speculatable,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import CSEDriver, OperationInfo
from xdsl.transforms.dead_code_elimination import LiveSet, would_be_trivially_dead
from xdsl.transforms.loop_invariant_code_motion import can_be_hoisted

Effect = AbstractSet[EffectInstance] | None

_CONSTANT_EFFECTS = tuple(
    (trait.get_effects.__func__, trait.get_effects(None))  # pyright: ignore
    for trait in (
        NoMemoryEffect,
        MemoryReadEffect,
        MemoryWriteEffect,
        MemoryAllocEffect,
        MemoryFreeEffect,
    )
)
_RECURSIVE = RecursiveMemoryEffect.get_effects.__func__  # pyright: ignore


@dataclass(frozen=True)
class ClassFacts:
    """What the cleanup reads from an op's class."""

    patterns: tuple[RewritePattern, ...]
    """Its canonicalization patterns, in xDSL's order."""
    folds: bool
    """It has a folder and is not a constant (canonicalize folds it)."""
    kept: bool
    """A terminator or a symbol: never trivially dead."""
    terminator: bool
    has_effects: bool
    """It has a memory-effect trait (else its effects are unknown)."""
    constant: frozenset[EffectInstance]
    """The effects of its constant effect traits."""
    recursive: bool
    """It has the effects of the ops it contains."""
    other: tuple[MemoryEffect, ...]
    """Effect traits that depend on the op itself, asked per op."""
    reads_only: bool
    """Its constant effects are reads (what it does besides, a dead op would not do)."""


@functools.cache
def class_facts(op_type: type[Operation]) -> ClassFacts | None:
    """The facts of a registered op class (None for unregistered ops)."""
    if issubclass(op_type, UnregisteredOp):
        return None
    constant: set[EffectInstance] = set()
    recursive = False
    other: list[MemoryEffect] = []
    effect_traits = op_type.get_traits_of_type(MemoryEffect)
    for trait in effect_traits:
        method = type(trait).get_effects.__func__  # pyright: ignore
        known = next((e for f, e in _CONSTANT_EFFECTS if f is method), None)
        if known is not None:
            constant.update(known)
        elif method is _RECURSIVE:
            recursive = True
        else:
            other.append(trait)
    terminator = op_type.has_trait(IsTerminator)
    return ClassFacts(
        patterns=tuple(
            pattern
            for trait in op_type.get_traits_of_type(HasCanonicalizationPatternsTrait)
            for pattern in trait.get_patterns(op_type)
        ),
        folds=op_type.has_trait(HasFolder) and not op_type.has_trait(ConstantLike),
        kept=terminator or op_type.has_trait(SymbolOpInterface),
        terminator=terminator,
        has_effects=bool(effect_traits),
        constant=frozenset(constant),
        recursive=recursive,
        other=tuple(other),
        reads_only=all(e.kind == MemoryEffectKind.READ for e in constant),
    )


class Effects:
    """xDSL's `get_effects`, `is_side_effect_free`, `is_trivially_dead` and
    `would_be_trivially_dead`, from `class_facts`. With `memo`, each op's effects are
    found once: only while no op's effects change, e.g. a walk that adds and removes no
    op, or moves only side-effect-free ones (operands may change: the memo keeps only
    effects that depend on op classes and nesting alone)."""

    def __init__(self, memo: bool) -> None:
        self._memo: dict[Operation, Effect] | None = {} if memo else None

    def of(self, op: Operation) -> Effect:
        """The op's memory effects, None when unknown."""
        return self._effects(op)[0]

    def _effects(self, op: Operation) -> tuple[Effect, bool]:
        """The effects and whether they depend on the ops' classes and nesting alone."""
        memo = self._memo
        if memo is not None and op in memo:
            return memo[op], True
        facts = class_facts(type(op))
        if facts is None:
            return get_effects(op), False
        if not facts.has_effects:
            return None, True
        if not facts.recursive and not facts.other:
            return facts.constant, True
        effects = set(facts.constant)
        stable = not facts.other
        for trait in facts.other:
            found = trait.get_effects(op)
            if found is None:
                return None, False
            effects.update(found)
        if facts.recursive:
            for region in op.regions:
                for block in region.blocks:
                    for child in block.ops:
                        found, child_stable = self._effects(child)
                        stable = stable and child_stable
                        if found is None:
                            if stable and memo is not None:
                                memo[op] = None
                            return None, stable
                        effects.update(found)
        if stable and memo is not None:
            memo[op] = effects
        return effects, stable

    def side_effect_free(self, op: Operation) -> bool:
        """Whether the op surely has no effect (xDSL's `is_side_effect_free`)."""
        effects = self.of(op)
        return effects is not None and not effects

    def would_be_trivially_dead(self, op: Operation) -> bool:
        """Whether the op would be dead if its results were (xDSL's)."""
        facts = class_facts(type(op))
        if facts is None:
            return would_be_trivially_dead(op)
        if facts.kept or not facts.has_effects:
            return False
        if not facts.recursive and not facts.other:
            return facts.reads_only
        if self._memo is None:
            return self._result_only(op, op)
        effects = self.of(op)
        return effects is not None and all(_result_only(e, op) for e in effects)

    def _result_only(self, op: Operation, root: Operation) -> bool:
        """Whether each effect of `op` is a read or allocates a value defined in `root`
        (xDSL's `result_only_effects` of `root`, stopped at the first other effect
        rather than collecting all of them)."""
        facts = class_facts(type(op))
        if facts is None or facts.other:
            effects = self.of(op)
            return effects is not None and all(_result_only(e, root) for e in effects)
        if not facts.has_effects or not facts.reads_only:
            return False
        if facts.recursive:
            for region in op.regions:
                for block in region.blocks:
                    for child in block.ops:
                        if not self._result_only(child, root):
                            return False
        return True

    def is_trivially_dead(self, op: Operation) -> bool:
        """Whether the op has no observable effect (xDSL's)."""
        for result in op.results:
            if result.first_use is not None:
                return False
        return self.would_be_trivially_dead(op)


def _result_only(effect: EffectInstance, root: Operation) -> bool:
    """A read, or the allocation of a value defined in `root`."""
    return effect.kind == MemoryEffectKind.READ or (
        effect.kind == MemoryEffectKind.ALLOC
        and isinstance(v := effect.value, SSAValue)
        and root.is_ancestor(v.owner)
    )


@dataclass(eq=False, repr=False)
class Canonicalize(RewritePattern):
    """xDSL's canonicalize step on one op: erase it if trivially dead, else fold it,
    else its class's patterns in order until one rewrites."""

    ctx: Context
    _effects: Effects = field(default_factory=lambda: Effects(memo=False), init=False)

    def __post_init__(self) -> None:
        self._folder = Folder(self.ctx)
        self._xdsl = GreedyRewritePatternApplier(
            [CanonicalizationRewritePattern()], ctx=self.ctx, folding_enabled=True
        )

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        facts = class_facts(type(op))
        if facts is None:
            self._xdsl.match_and_rewrite(op, rewriter)
            return
        if self._effects.is_trivially_dead(op):
            rewriter.erase(op)
            return
        if facts.folds and (folded := self._folder.try_fold(op)) is not None:
            values, new_ops = folded
            rewriter.replace(op, new_ops=new_ops, new_results=values)
            return
        for pattern in facts.patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """xDSL's `region_dce`, the same ops erased: live are the ops (in blocks reachable
    from their region's entry) with effects, and those whose results a live op uses.
    xDSL finds them by walking every op again until nothing changes (at least twice);
    this walks once and follows operands from the live ops."""
    effects = Effects(memo=True)
    reached: set[Operation] = set()
    work: list[Operation] = []

    def reach(region: Region) -> None:
        if (first := region.first_block) is None:
            return
        for block in PostOrderIterator(first):
            for op in block.ops:
                reached.add(op)
                if op.regions:
                    for inner in op.regions:
                        reach(inner)
                if not effects.would_be_trivially_dead(op):
                    work.append(op)

    reach(region)
    live: set[Operation] = set()
    while work:
        op = work.pop()
        if op in live:
            continue
        live.add(op)
        for operand in op.operands:
            if (owner := operand.owner) in reached and owner not in live:
                work.append(owner)  # pyright: ignore[reportArgumentType]
    live_set = LiveSet(changed=False, _live_ops=live)
    live_set.delete_dead(region, listener)
    return live_set.changed


def canonicalize(ctx: Context, module: ModuleOp) -> None:
    """xDSL's `CanonicalizePass().apply(ctx, module)`, the same rewrites."""
    PatternRewriteWalker(Canonicalize(ctx), post_walk_func=region_dce).rewrite_module(
        module
    )


class _OperationKey(OperationInfo):
    """xDSL's cse key of an op, its hash found once: xDSL's finds it again at each
    lookup and comparison (hashing every attribute). A known op's key does not change:
    cse replaces a value only where no user of it is known."""

    def __init__(self, op: Operation) -> None:
        super().__init__(op)
        self._hash = super().__hash__()

    def __hash__(self) -> int:
        return self._hash


@dataclass
class _CSEDriver(CSEDriver):
    """xDSL's cse, with the effects of each op found once (ops are erased at the end)."""

    effects: Effects = field(default_factory=lambda: Effects(memo=True))

    def _simplify_operation(self, op: Operation) -> None:
        facts = class_facts(type(op))
        if facts is None:
            super()._simplify_operation(op)
            return
        if facts.terminator:
            return
        if self.effects.is_trivially_dead(op):
            self._mark_erasure(op)
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        effects = self.effects.of(op)
        if effects is None or effects:
            # Not side-effect free: CSE-able only when it only reads, and no write
            # between the known op and this one in the same block.
            if effects is None or any(e.kind != MemoryEffectKind.READ for e in effects):
                return
            key = _OperationKey(op)
            if existing := self._known(key):
                if op.parent_block() is existing.parent_block() and not self._written(
                    existing, op
                ):
                    self._replace_and_delete(op, existing)
                    return
            self._know(key, op)
            return
        key = _OperationKey(op)
        if existing := self._known(key):
            self._replace_and_delete(op, existing)
            return
        self._know(key, op)

    def _known(self, key: _OperationKey) -> Operation | None:
        return self._known_ops._known_ops.get(key)  # pyright: ignore[reportPrivateUsage]

    def _know(self, key: _OperationKey, op: Operation) -> None:
        self._known_ops._known_ops[key] = op  # pyright: ignore[reportPrivateUsage]

    def _written(self, from_op: Operation, to_op: Operation) -> bool:
        """xDSL's `has_other_side_effecting_op_in_between`."""
        next_op = from_op
        while next_op is not to_op:
            effects = self.effects.of(next_op)
            if effects is None or any(e.kind is MemoryEffectKind.WRITE for e in effects):
                return True
            next_op = next_op.next_op
            assert next_op is not None, "Incorrect order of ops in side-effect search"
        return False


def cse(module: ModuleOp) -> None:
    """xDSL's `CommonSubexpressionElimination().apply(ctx, module)`, the same rewrites."""
    _CSEDriver().simplify(module)


@dataclass(eq=False, repr=False)
class _LoopInvariantCodeMotion(RewritePattern):
    """xDSL's licm on one loop, with each op's effects found once per licm: hoisting
    moves only side-effect-free ops, so no op's effects change meanwhile."""

    effects: Effects

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        region = op.body
        builder = Builder(InsertPoint.before(op))
        worklist = deque(o for block in region.blocks for o in block.ops)
        while worklist:
            child = worklist.popleft()
            if child.parent_region() != region:
                continue
            if not (
                self.effects.side_effect_free(child)
                and is_speculatable(child)
                and can_be_hoisted(child, region)
            ):
                continue
            child.detach()
            builder.insert(child)
            for result in child.results:
                for use in result.uses:
                    if use.operation.parent_region() == region:
                        worklist.append(use.operation)


def licm(module: ModuleOp) -> None:
    """xDSL's `LoopInvariantCodeMotionPass().apply(ctx, module)`, the same moves."""
    PatternRewriteWalker(
        _LoopInvariantCodeMotion(Effects(memo=True)),
        apply_recursively=False,
        walk_regions_first=True,
    ).rewrite_module(module)
