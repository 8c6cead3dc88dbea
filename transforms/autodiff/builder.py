"""What the adjoint rules and the control-flow reversal may ask of the AD driver.

These types sit below the driver (`driver.py`), the rules (`rules/`) and the control-flow
reversal (`scf.py`), so that none of those imports another just for a type.
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
