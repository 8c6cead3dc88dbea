"""Adjoint rules, one module per dialect, in the spirit of Enzyme's `*Derivatives.td`.

Each dialect module exports `RULES: dict[type[Operation], Rule]`: the op class maps to a
function `rule(g, op)` that emits, at the current point of the reverse sweep, the adjoint
code of `op`. A rule talks to the driver only through the `ReverseBuilder` protocol below:
it asks for primal values (the driver recomputes or pops them), reads the adjoints of the
op's results, and accumulates contributions into the adjoints of its operands (or into
shadow memory). Control flow (scf.for, scf.if, scf.while) lives in `autodiff/scf.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from xdsl.builder import Builder
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint


class ReverseBuilder(Protocol):
    """What a rule may ask of the AD driver."""

    b: Builder
    """Inserts at the current point of the reverse sweep."""

    def primal(self, value: SSAValue) -> SSAValue:
        """`value` as seen from the reverse sweep (available, recomputed, or popped)."""
        ...

    def adjoint(self, value: SSAValue) -> SSAValue | None:
        """The current adjoint of a scalar, None when it is (still) zero."""
        ...

    def accumulate(self, value: SSAValue, contribution: SSAValue) -> None:
        """Adds `contribution` to the adjoint of `value`; ignored for inactive values."""
        ...

    def is_active(self, value: SSAValue) -> bool: ...

    def shadow(self, memref: SSAValue) -> SSAValue | None:
        """The shadow buffer of an active memref, None for an inactive one."""
        ...

    def const(self, value: float | int, type: Attribute) -> SSAValue: ...


class ControlFlowBuilder(ReverseBuilder, Protocol):
    """What the control-flow reversal (`autodiff/scf.py`) asks of the AD driver, on top of
    a rule's `ReverseBuilder`. It lives here, below both, so that scf.py needs no import of
    the driver that dispatches to it."""

    adj: dict[SSAValue, SSAValue]
    """The adjoints of the current scope (scalar -> its adjoint)."""
    ctx: Any
    """The current reverse context (opaque here: made by `new_context`, saved, restored)."""

    def adjoint_or_zero(self, value: SSAValue) -> SSAValue: ...

    def primal_cached(self, value: SSAValue) -> SSAValue:
        """`value` in the reverse sweep, always through a cache (never recomputed)."""
        ...

    def new_context(
        self, block: Block, pop_at: InsertPoint, rec_at: InsertPoint | None = None
    ) -> Any: ...

    def nested(
        self, block: Block, adj: dict[SSAValue, SSAValue]
    ) -> AbstractContextManager[None]: ...

    def free_active(self, op: Operation) -> list[SSAValue]: ...

    def pair_loops(self, forward: Operation, reverse: Operation) -> None: ...

    def reverse_block(self, block: Block) -> None: ...


Rule = Callable[[ReverseBuilder, Operation], None]


def all_rules() -> dict[type[Operation], Rule]:
    """The registry: op class -> adjoint builder, over every dialect."""
    from tapeflow.transforms.autodiff.rules import arith, math, memref

    rules: dict[type[Operation], Rule] = {}
    for module in (arith, math, memref):
        rules.update(module.RULES)
    return rules
