"""Helpers shared by the dialect definitions."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException


def count_operand_or_property(count: SSAValue | int, prop: str) -> dict[str, Any]:
    """The operands and properties of an op counting something either at compile time (an
    int: the index property `prop`, no operand) or at run time (an SSA value: the operand)."""
    if isinstance(count, int):
        return {"operands": [[]], "properties": {prop: IntegerAttr(count, IndexType())}}
    return {"operands": [[count]]}


def verify_count_operand_or_property(
    dynamic: SSAValue | None, static: IntegerAttr | None, operand: str, keyword: str
) -> None:
    """Exactly one of `dynamic` (described as a `operand` operand) and `static` (the
    property printed as `keyword`) is present, and `static` is at least 1."""
    if (dynamic is None) == (static is None):
        raise VerifyException(
            f"expected exactly one of a {operand} operand or a {keyword} property"
        )
    if static is not None and static.value.data < 1:
        raise VerifyException(f"{keyword} must be >= 1, got {static.value.data}")
