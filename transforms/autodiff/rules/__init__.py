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
from typing import Protocol

from xdsl.builder import Builder
from xdsl.ir import Attribute, Operation, SSAValue


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


Rule = Callable[[ReverseBuilder, Operation], None]


def all_rules() -> dict[type[Operation], Rule]:
    """The registry: op class -> adjoint builder, over every dialect."""
    from tapeflow.transforms.autodiff.rules import arith, math, memref

    rules: dict[type[Operation], Rule] = {}
    for module in (arith, math, memref):
        rules.update(module.RULES)
    return rules
