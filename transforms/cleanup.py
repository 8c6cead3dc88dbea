"""xDSL's canonicalize and cse with each op class's traits looked up once.

`tapeflow-cleanup` spends most of its time asking xDSL the same questions about op
classes: `get_trait` and `get_traits_of_type` scan the class's traits on every call, and
`get_effects` of a loop collects the effects of its whole body again each time an op
(the loop, or each op around it) is asked about. The drivers here make the same rewrites
in the same order as xDSL's `CanonicalizePass` and `CommonSubexpressionElimination`:

- `class_facts`: what canonicalize, the dead-code pass and cse read from an op's class
  (its canonicalization patterns, whether it folds, is a terminator or a symbol, its
  memory-effect traits), found once per class;
- `Effects`: xDSL's `get_effects` from those facts, memoized per op where the IR it
  depends on does not change meanwhile (the dead-code pass's liveness, one cse);
- `canonicalize`: xDSL's greedy walker with one pattern that does what
  `GreedyRewritePatternApplier([CanonicalizationRewritePattern()], folding_enabled=True)`
  does, and `region_dce` with memoized effects between walks;
- `cse`: xDSL's `CSEDriver` whose per-op decision reads `Effects`.

Ops whose class is unregistered, and effect traits of other kinds than xDSL's constant
ones and `RecursiveMemoryEffect`, go through xDSL's own functions.
"""

from __future__ import annotations

import functools
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.folder import Folder
from xdsl.ir import Operation, Region, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
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
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.common_subexpression_elimination import CSEDriver
from xdsl.transforms.dead_code_elimination import LiveSet, would_be_trivially_dead

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
    )


class Effects:
    """xDSL's `get_effects`, `is_trivially_dead` and `would_be_trivially_dead`, from
    `class_facts`. With `memo`, each op's effects are found once: only for a walk in
    which no op is added, removed or moved (operands may change: the memo keeps only
    effects that do not read them)."""

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

    def would_be_trivially_dead(self, op: Operation) -> bool:
        """Whether the op would be dead if its results were (xDSL's)."""
        facts = class_facts(type(op))
        if facts is None:
            return would_be_trivially_dead(op)
        if facts.kept:
            return False
        effects = self.of(op)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (
                e.kind == MemoryEffectKind.ALLOC
                and isinstance(v := e.value, SSAValue)
                and op.is_ancestor(v.owner)
            )
            for e in effects
        )

    def is_trivially_dead(self, op: Operation) -> bool:
        """Whether the op has no observable effect (xDSL's)."""
        return all(
            result.first_use is None for result in op.results
        ) and self.would_be_trivially_dead(op)


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


@dataclass
class _LiveSet(LiveSet):
    """xDSL's liveness, asking each op's effects once per `region_dce`."""

    effects: Effects = field(default_factory=lambda: Effects(memo=True))

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if not self.effects.would_be_trivially_dead(op):
            self.set_live(op)
            return
        if any(
            self.is_live(use.operation) for result in op.results for use in result.uses
        ):
            self.set_live(op)


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """xDSL's `region_dce`: ops live from the effects out, the others erased."""
    live_set = _LiveSet()
    while live_set.changed:
        live_set.changed = False
        live_set.propagate_region_liveness(region)
    live_set.delete_dead(region, listener)
    return live_set.changed


def canonicalize(ctx: Context, module: ModuleOp) -> None:
    """xDSL's `CanonicalizePass().apply(ctx, module)`, the same rewrites."""
    PatternRewriteWalker(Canonicalize(ctx), post_walk_func=region_dce).rewrite_module(
        module
    )


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
            if existing := self._known_ops.get(op):
                if op.parent_block() is existing.parent_block() and not self._written(
                    existing, op
                ):
                    self._replace_and_delete(op, existing)
                    return
            self._known_ops[op] = op
            return
        if existing := self._known_ops.get(op):
            self._replace_and_delete(op, existing)
            return
        self._known_ops[op] = op

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
